/** The part of `fs-ext` (native flock(2) binding, no bundled types) that cronix uses. */
declare module 'fs-ext' {
  /** flock(2) operations: shared/exclusive, `nb` = non-blocking, `un` = unlock. */
  export type FlockFlag = 'sh' | 'ex' | 'shnb' | 'exnb' | 'un';
  /**
   * Calls flock(2) on `fd`. Throws an errno error (`code` such as `EAGAIN`
   * when a non-blocking lock is held elsewhere).
   */
  export function flockSync(fd: number, flags: FlockFlag): void;
}
