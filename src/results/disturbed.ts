/**
 * A disturbed duet's run in results/ (the gate's files and the report's copies): beside the
 * run's own name, numbered, so the duet's re-run keeps that name.
 */
export function disturbedFileName(runName: string, nth: number): string {
  return `${runName}-disturbed-${nth}.json`;
}
