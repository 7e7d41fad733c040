/**
 * The change a run is for (`init-run --for-change`): a pull request
 * `OWNER/REPO#NUMBER` or a branch `OWNER/REPO@BRANCH`. One linear pattern: no
 * nested repetition.
 */
export const CHANGE_REF_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,99}\/[A-Za-z0-9_.-]{1,100}(#[1-9][0-9]{0,9}|@[A-Za-z0-9._/-]{1,200})$/;
