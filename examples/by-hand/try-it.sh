#!/usr/bin/env bash
# What the hooks and the Codex tail do, done by hand against a throw-away daemon and repository.
# Needs git and GNU date. From a clone: npm ci && npm run build && HANDOFF="node dist/bin/handoff.js" examples/by-hand/try-it.sh
set -euo pipefail
read -r -a handoff <<< "${HANDOFF:-handoff}"
work=$(mktemp -d)
export HANDOFF_STATE_DIR="$work/state"
repo="$work/repo"
git init -q "$repo" && git -C "$repo" -c user.name=me -c user.email=me@example.invalid commit -q --allow-empty -m start

"${handoff[@]}" daemon >/dev/null 2>&1 &
trap '"${handoff[@]}" daemon stop >/dev/null; rm -rf "$work"' EXIT
until [ -f "$HANDOFF_STATE_DIR/daemon.json" ]; do sleep 0.1; done

now=$(date +%s)
echo '# 1. Claude Code pipes a JSON object into its statusLine command after every message:'
printf '{"cwd":"%s","session_id":"by-hand","context_window":{"used_percentage":59},"rate_limits":{"five_hour":{"used_percentage":82,"resets_at":%d},"seven_day":{"used_percentage":41,"resets_at":%d}}}' \
  "$repo" $((now + 3600)) $((now + 500000)) | "${handoff[@]}" hook claude-statusline

echo '# 2. A Codex rollout file (the daemon tails ~/.codex/sessions by itself; this feeds one by hand):'
rollout="$work/rollout-by-hand.jsonl"
printf '{"timestamp":"%s","type":"session_meta","payload":{"id":"codex-by-hand","cwd":"%s"}}\n' "$(date -u +%FT%TZ)" "$repo" > "$rollout"
printf '{"timestamp":"%s","type":"event_msg","payload":{"type":"token_count","info":null,"rate_limits":{"primary":{"used_percent":93,"window_minutes":300,"resets_at":%d},"secondary":null}}}\n' \
  "$(date -u +%FT%TZ)" $((now + 3600)) >> "$rollout"
"${handoff[@]}" ingest codex-rollout --file "$rollout"

echo '# 3. Provider headers, as `curl -D -` prints them, need --repo: they name no directory:'
printf 'HTTP/2 200\r\nanthropic-ratelimit-requests-limit: 4000\r\nanthropic-ratelimit-requests-remaining: 3999\r\nanthropic-ratelimit-requests-reset: %s\r\n\r\n' \
  "$(date -u -d @$((now + 60)) +%FT%TZ)" | "${handoff[@]}" ingest anthropic-headers --repo "$repo"

echo '# 4. The PreToolUse guard: this session holds no lease and the repository is in EVACUATE:'
printf '{"session_id":"by-hand","cwd":"%s","hook_event_name":"PreToolUse","tool_name":"Edit","tool_input":{"file_path":"%s/README.md"}}' \
  "$repo" "$repo" | "${handoff[@]}" hook claude-guard
echo

echo '# 5. Status:'
"${handoff[@]}" status --repo "$repo"
