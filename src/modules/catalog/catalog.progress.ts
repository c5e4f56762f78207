import type { ImportProgress, ImportStage } from './catalog.import.ts';

// Import progress for the operator: a redrawn bar on a terminal, plain count lines otherwise
// (a log file or a CI console must not fill up with carriage returns).

const BAR_WIDTH = 30;

export function progressReporter(out: NodeJS.WritableStream & { isTTY?: boolean; columns?: number }): ImportProgress & { finish(): void } {
  const tty = out.isTTY === true;
  let lastStage: ImportStage | undefined;
  let lastDraw = 0;
  let lastDecile = -1;
  let open = false;

  const report = (stage: ImportStage, done: number, total: number) => {
    const label = stage === 'validate' ? 'validating records' : stage;
    const newStage = stage !== lastStage;
    if (newStage) {
      if (open) out.write('\n');
      open = false;
      lastStage = stage;
      lastDecile = -1;
    }
    const finished = done >= total;
    if (tty) {
      // Redraw at most ten times a second, and always a stage's first and final state.
      const now = Date.now();
      if (!finished && !newStage && now - lastDraw < 100) return;
      lastDraw = now;
      const share = total === 0 ? 1 : done / total;
      const filled = Math.round(share * BAR_WIDTH);
      out.write(
        `\r\u001b[K[${'#'.repeat(filled)}${'.'.repeat(BAR_WIDTH - filled)}] ${String(Math.floor(share * 100)).padStart(3)}% ${label} ${done}/${total}`,
      );
      open = true;
    } else {
      const decile = total === 0 ? 10 : Math.floor((done / total) * 10);
      if (decile === lastDecile) return;
      lastDecile = decile;
      out.write(`catalog import: ${label} ${done}/${total}\n`);
    }
  };
  return Object.assign(report, {
    finish() {
      if (open) out.write('\n');
      open = false;
    },
  });
}
