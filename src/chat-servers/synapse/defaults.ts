export const SYNAPSE_PACKAGE = 'matrix-synapse';
