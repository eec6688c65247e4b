/**
 * Times in the words the CLI and the dashboard share. No imports: the dashboard page loads the
 * compiled module itself (`/dashboard/time-words.js`), so a duration means the same on both.
 */

/** "12 s ago", "2 min ago", "3 h ago", "2 days ago". */
export function formatAge(ageSeconds: number): string {
  const s = Math.max(0, Math.round(ageSeconds));
  if (s < 90) return `${s} s ago`;
  if (s < 90 * 60) return `${Math.round(s / 60)} min ago`;
  if (s < 36 * 3600) return `${Math.round(s / 3600)} h ago`;
  return `${Math.round(s / 86400)} days ago`;
}

/** "45 s", "3 min 20 s", "2 h 5 min". */
export function formatDuration(totalSeconds: number): string {
  const s = Math.max(0, Math.round(totalSeconds));
  if (s < 60) return `${s} s`;
  if (s < 600) return `${Math.floor(s / 60)} min${s % 60 === 0 ? '' : ` ${s % 60} s`}`;
  if (s < 3600) return `${Math.floor(s / 60)} min`;
  if (s < 48 * 3600) return `${Math.floor(s / 3600)} h${Math.floor((s % 3600) / 60) === 0 ? '' : ` ${Math.floor((s % 3600) / 60)} min`}`;
  return `${Math.round(s / 86400)} days`;
}

/** A moment relative to now: "in 2 h 5 min" ahead, "3 min ago" behind. */
export function formatRelative(deltaSeconds: number): string {
  // A second or two of clock skew between the daemon and the reader is "now", not "in 1 s".
  return deltaSeconds >= 2 ? `in ${formatDuration(deltaSeconds)}` : formatAge(-deltaSeconds);
}
