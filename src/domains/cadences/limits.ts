// The bounds of cadences: steps per cadence, the longest wait between two, leads per enrolment request.
export const MAX_STEPS = 50;
export const MAX_DELAY_SECONDS = 90 * 24 * 60 * 60;
export const MAX_ENROLMENTS_PER_REQUEST = 1_000;
