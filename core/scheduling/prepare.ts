import type { Seed, ShootSpec, Taint } from '../model/index.js';
import { failureTolerance, type FailureToleranceType } from '../model/index.js';
import { MULTI_ZONAL_LABEL, REQUIRED_SEED_CONDITIONS } from './constants.js';
import { NETWORK_NAMES, parseCidrFast, parseNetworks, type NetworkName, type ParsedNetworks } from './networks.js';

function seedIsReady(seed: Seed): boolean {
  let ready = 0;
  for (const c of seed.status.conditions) {
    if (c.status === 'True' && (REQUIRED_SEED_CONDITIONS as readonly string[]).includes(c.type)) ready++;
  }
  return ready === REQUIRED_SEED_CONDITIONS.length;
}

/** Why a seed is not usable regardless of the shoot (deleting, hidden, not ready), or undefined. */
export function unusableReason(seed: Seed): string | undefined {
  if (seed.metadata.deletionTimestamp !== undefined) return `being deleted since ${seed.metadata.deletionTimestamp}`;
  if (seed.spec.settings?.scheduling?.visible === false)
    return 'hidden from scheduling (spec.settings.scheduling.visible is false)';
  for (const type of REQUIRED_SEED_CONDITIONS) {
    const condition = seed.status.conditions.find((c) => c.type === type);
    if (condition === undefined) return `condition ${type} is not reported yet`;
    if (condition.status !== 'True')
      return `condition ${type} is ${condition.status}${condition.reason === undefined ? '' : ` (${condition.reason})`}`;
  }
  return undefined;
}

/** `status.labels` (derived, see deriveSeedLabels) first, then `metadata.labels`. */
export function labelOf(seed: Seed, key: string): string | undefined {
  return seed.status.labels?.[key] ?? seed.metadata.labels?.[key];
}

function intern(codes: Map<string, number>, list: string[], value: string): number {
  let code = codes.get(value);
  if (code === undefined) {
    code = list.push(value) - 1;
    codes.set(value, code);
  }
  return code;
}

const byName = (a: Seed, b: Seed): number =>
  a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0;

/**
 * The fleet laid out for scheduling: seeds sorted by name (so position order is name order and every output
 * is stable), and what the filters read in flat typed arrays, so that a decision over 10,000 seeds walks
 * contiguous memory and allocates nothing per seed. Strings that repeat across seeds (providers, regions)
 * are interned to small integer codes. A Lambda that keeps an index between decisions pays this only when
 * the fleet changes.
 */
export class SeedIndex {
  readonly kind = 'SeedIndex';
  readonly size: number;
  readonly seeds: readonly Seed[];
  readonly names: readonly string[];
  readonly usable: Uint8Array;
  readonly lastHeartbeat: Float64Array;
  readonly providerCode: Int32Array;
  readonly regionCode: Int32Array;
  /** Distinct providers and regions; a code is the index into these. */
  readonly providers: string[] = [];
  readonly regions: string[] = [];
  readonly multiZonal: Uint8Array;
  readonly hasTaints: Uint8Array;
  readonly shoots: Float64Array;
  /** The lower of `spec.capacity.shoots` and `status.allocatable.shoots`; Infinity when neither is set. */
  readonly capacity: Float64Array;
  /** Up to three networks per seed at `3 * i + k`; `networkCount[i]` of them are set. */
  readonly networkFirst: Float64Array;
  readonly networkLast: Float64Array;
  readonly networkCount: Uint8Array;
  /** Index into NETWORK_NAMES of each parsed network. */
  readonly networkKind: Uint8Array;

  constructor(input: readonly Seed[]) {
    let sorted = true;
    for (let i = 1; i < input.length && sorted; i++) if (byName(input[i - 1]!, input[i]!) > 0) sorted = false;
    // Code-unit order, not localeCompare: names are DNS labels, and stores usually return them sorted already.
    const seeds = sorted ? input : [...input].sort(byName);
    const n = seeds.length;
    this.size = n;
    this.seeds = seeds;
    this.names = seeds.map((s) => s.metadata.name);
    this.usable = new Uint8Array(n);
    this.lastHeartbeat = new Float64Array(n);
    this.providerCode = new Int32Array(n);
    this.regionCode = new Int32Array(n);
    this.multiZonal = new Uint8Array(n);
    this.hasTaints = new Uint8Array(n);
    this.shoots = new Float64Array(n);
    this.capacity = new Float64Array(n);
    this.networkFirst = new Float64Array(3 * n);
    this.networkLast = new Float64Array(3 * n);
    this.networkCount = new Uint8Array(n);
    this.networkKind = new Uint8Array(3 * n);
    const providerCodes = new Map<string, number>();
    const regionCodes = new Map<string, number>();

    for (let i = 0; i < n; i++) {
      const seed = seeds[i]!;
      const { spec, status, metadata } = seed;
      this.usable[i] =
        metadata.deletionTimestamp === undefined && spec.settings?.scheduling?.visible !== false && seedIsReady(seed)
          ? 1
          : 0;
      this.lastHeartbeat[i] = status.lastHeartbeatTime === undefined ? NaN : Date.parse(status.lastHeartbeatTime);
      this.providerCode[i] = intern(providerCodes, this.providers, spec.provider.type);
      this.regionCode[i] = intern(regionCodes, this.regions, spec.provider.region);
      this.multiZonal[i] = labelOf(seed, MULTI_ZONAL_LABEL) === 'true' ? 1 : 0;
      this.hasTaints[i] = spec.taints !== undefined && spec.taints.length > 0 ? 1 : 0;
      this.shoots[i] = status.shoots ?? 0;
      this.capacity[i] = Math.min(spec.capacity?.shoots ?? Infinity, status.allocatable?.shoots ?? Infinity);
      const { nodes, pods, services } = spec.networks;
      let k = this.addNetwork(i, 0, 0, nodes);
      k = this.addNetwork(i, k, 1, pods);
      this.networkCount[i] = this.addNetwork(i, k, 2, services);
    }
  }

  /** Stores one seed network at slot k; returns the next free slot. */
  private addNetwork(i: number, k: number, kind: number, text: string | undefined): number {
    // Validation rejects malformed CIDRs before they reach the scheduler; one that slips through cannot overlap.
    const range = text === undefined ? undefined : parseCidrFast(text);
    if (range === undefined) return k;
    this.networkFirst[3 * i + k] = range.first;
    this.networkLast[3 * i + k] = range.last;
    this.networkKind[3 * i + k] = kind;
    return k + 1;
  }

  networkName(slot: number): NetworkName {
    return NETWORK_NAMES[this.networkKind[slot]!]!;
  }

  /** Position of a seed by name (binary search: positions are in name order), or -1. */
  position(name: string): number {
    let lo = 0;
    let hi = this.size - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const at = this.names[mid]!;
      if (at === name) return mid;
      if (at < name) lo = mid + 1;
      else hi = mid - 1;
    }
    return -1;
  }

  taints(i: number): readonly Taint[] {
    return this.seeds[i]!.spec.taints ?? [];
  }

  label(i: number, key: string): string | undefined {
    return labelOf(this.seeds[i]!, key);
  }

  /** Hosted shoots over capacity; 0 on a seed without a limit. */
  utilisation(i: number): number {
    const capacity = this.capacity[i]!;
    if (capacity === Infinity) return 0;
    return capacity === 0 ? 1 : this.shoots[i]! / capacity;
  }
}

export function indexSeeds(seeds: readonly Seed[]): SeedIndex {
  return new SeedIndex(seeds);
}

export function isSeedIndex(value: unknown): value is SeedIndex {
  return value instanceof SeedIndex;
}

/** The shoot reduced to what the filters read, resolved against one index, once per decision. */
export interface PreparedShoot {
  readonly provider: string;
  /** The shoot's provider code in the index; -1 when no seed has it. */
  readonly providerCode: number;
  readonly region: string;
  readonly regionCode: number;
  readonly testing: boolean;
  readonly matchLabels: readonly (readonly [string, string])[];
  /** `seedSelector.providerTypes` as given, for explanations; undefined: the default, the shoot's own provider. */
  readonly providerTypes: readonly string[] | undefined;
  /** By provider code: whether the shoot accepts seeds of that provider. */
  readonly providerAllowed: Uint8Array;
  /** Toleration key to the values it tolerates ('' for a toleration without value), as Gardener compares them. */
  readonly tolerations: ReadonlyMap<string, readonly string[]>;
  readonly networks: ParsedNetworks;
  readonly failureTolerance: FailureToleranceType | undefined;
}

export function prepareShoot(spec: ShootSpec, index: SeedIndex): PreparedShoot {
  const types = spec.seedSelector?.providerTypes;
  const providerTypes = types === undefined || types.length === 0 ? undefined : types;
  const providerAllowed = new Uint8Array(index.providers.length);
  index.providers.forEach((p, code) => {
    providerAllowed[code] = (
      providerTypes === undefined ? p === spec.provider.type : providerTypes.includes('*') || providerTypes.includes(p)
    )
      ? 1
      : 0;
  });
  const tolerations = new Map<string, string[]>();
  for (const t of spec.tolerations ?? []) {
    const values = tolerations.get(t.key) ?? [];
    values.push(t.value ?? '');
    tolerations.set(t.key, values);
  }
  return {
    provider: spec.provider.type,
    providerCode: index.providers.indexOf(spec.provider.type),
    region: spec.region,
    regionCode: index.regions.indexOf(spec.region),
    testing: spec.purpose === 'testing',
    matchLabels: Object.entries(spec.seedSelector?.matchLabels ?? {}),
    providerTypes,
    providerAllowed,
    tolerations,
    networks: parseNetworks(spec.networking),
    failureTolerance: failureTolerance(spec),
  };
}
