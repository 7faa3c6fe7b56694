// Node score magnitudes (KAI: plugins/scores). Each tier outweighs every tier below it,
// so a node order is effectively lexicographic over them.
export const SCORES = {
  /** nodeplacement: binpack/spread contribute at most this. */
  maxHighDensity: 9,
  resourceType: 10,
  availability: 100,
  gpuSharing: 1000,
  topology: 10_000,
  nominatedNode: 1_000_000,
} as const;
