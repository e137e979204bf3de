/**
 * DynamoDB's own measure of an item, as its quotas count it (400 KB an item, 4 MB a transaction): attribute
 * names and string values by their UTF-8 bytes, a number by its significant digits (one byte per two, plus
 * one), a boolean or null one byte, and a map or list three bytes plus one a member beside its members.
 * Of a document client's plain value, so that the writer can size what it is about to write.
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/CapacityUnitCalculations.html
 */
export function itemSize(item: Record<string, unknown>): number {
  let size = 0;
  for (const [name, value] of Object.entries(item))
    if (value !== undefined) size += Buffer.byteLength(name) + valueSize(value);
  return size;
}

function valueSize(value: unknown): number {
  if (value === null || typeof value === 'boolean') return 1;
  if (typeof value === 'string') return Buffer.byteLength(value);
  if (typeof value === 'number' || typeof value === 'bigint') {
    const digits = String(value)
      .replace(/[-+.]|e.*$/gi, '')
      .replace(/^0+/, '')
      .replace(/0+$/, '');
    return Math.ceil(Math.max(1, digits.length) / 2) + 1;
  }
  if (value instanceof Uint8Array) return value.byteLength;
  if (value instanceof Set) return [...value].reduce<number>((sum, member) => sum + valueSize(member), 0);
  if (Array.isArray(value)) return 3 + value.reduce<number>((sum, member) => sum + 1 + valueSize(member), 0);
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return 3 + entries.reduce((sum, [name, member]) => sum + 1 + Buffer.byteLength(name) + valueSize(member), 0);
  }
  return 0;
}

/** DynamoDB's quotas that the writers size against. */
export const DYNAMODB_LIMITS = {
  itemBytes: 400 * 1024,
  transactionBytes: 4 * 1024 * 1024,
  transactionItems: 100,
} as const;
