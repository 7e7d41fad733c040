/**
 * Start counting turns of the event loop (each turn schedules the next) and
 * return the function that stops counting and says how many there were:
 * work held on the thread lets through a handful, work off it lets them run on.
 */
export function countTurns(): () => number {
  let turns = 0;
  let done = false;
  const tick = () => {
    if (done) return;
    turns++;
    setImmediate(tick);
  };
  setImmediate(tick);
  return () => {
    done = true;
    return turns;
  };
}
