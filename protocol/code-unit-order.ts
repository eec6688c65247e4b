/**
 * Strings in the order of their UTF-16 code units (what `sort()` does with no comparator): the same
 * order in every locale, and no ICU collator, whose first use costs a process 2–3 MB of resident
 * memory for good (`localeCompare`, docs/performance/daemon.md). For names, ids and paths, not prose.
 */
export const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
