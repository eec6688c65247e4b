import { describe, expect, it } from 'vitest';
import { decodeText } from '../../../daemon/evacuation/secret-scan.js';
import { utf32WithBom } from '../../support/secrets.js';

const TEXT = 'AWS_SECRET_ACCESS_KEY=abc\nné 🙂\n';

describe('text is decoded by its BOM as an editor would (issue 33 item 7)', () => {
  it('UTF-8, UTF-16 LE/BE and UTF-32 LE/BE give the same text; UTF-32 LE is not taken for UTF-16 LE', () => {
    const utf16le = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(TEXT, 'utf16le')]);
    const utf16be = Buffer.concat([Buffer.from([0xfe, 0xff]), Buffer.from(TEXT, 'utf16le').swap16()]);
    const utf8 = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(TEXT)]);
    for (const bytes of [utf8, utf16le, utf16be, utf32WithBom(TEXT, 'le'), utf32WithBom(TEXT, 'be')]) expect(decodeText(bytes)).toBe(TEXT);
  });

  it('a UTF-32 BOM over bytes that are no UTF-32 text is not decodable (null: listed unscanned, never clean)', () => {
    const cut = utf32WithBom(TEXT, 'le').subarray(0, 4 * 5 + 2);
    const beyond = Buffer.concat([utf32WithBom('a', 'be'), Buffer.from([0x00, 0x11, 0x00, 0x00])]);
    const surrogate = Buffer.concat([utf32WithBom('a', 'le'), Buffer.from([0x00, 0xd8, 0x00, 0x00])]);
    for (const bytes of [cut, beyond, surrogate]) expect(decodeText(bytes)).toBeNull();
  });
});
