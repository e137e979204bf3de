// The ledger is generic: it moved to the seed agent; the test agent keeps importing it from here.
export * from '../../../seed/agent/ledger.js';
