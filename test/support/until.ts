/**
 * Waits until `check` holds, asking again every `everyMs`; throws naming `what` after `timeoutMs`.
 * The bound only ends a stuck test: it is generous, and no test asserts how fast something
 * happened by it (a figure of speed belongs in bench/, measured in one run).
 */
export async function until(check: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000, everyMs = 20): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
