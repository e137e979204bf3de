import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { etcdFailure, OutputTail } from '../../../seed/backup-restore/etcd-log.js';

describe('etcdFailure', () => {
  it('names the last critical line of capnslog output', () => {
    const output = [
      '2026-12-06 08:56:41.253493 I | etcdmain: setting maximum number of CPUs to 2',
      "[WARNING] Deprecated '--logger=capnslog' flag is set; use '--logger=zap' flag instead",
      '2026-12-06 08:56:41.253804 C | etcdmain: listen tcp 127.0.0.1:22379: bind: address already in use',
      '',
    ].join('\n');
    expect(etcdFailure(output)).toBe('etcdmain: listen tcp 127.0.0.1:22379: bind: address already in use');
  });

  it('prefers the last error line to an earlier critical one', () => {
    const output = [
      '2026-12-06 08:56:41.1 C | etcdmain: first',
      '2026-12-06 08:56:41.2 E | etcdserver: second',
      '2026-12-06 08:56:41.3 N | etcdserver: notice',
    ].join('\n');
    expect(etcdFailure(output)).toBe('etcdserver: second');
  });

  it('reads zap lines: the message and its error', () => {
    const output = [
      '{"level":"info","msg":"starting"}',
      '{"level":"fatal","ts":1,"caller":"etcdmain/etcd.go:204","msg":"discovery failed","error":"member has already been bootstrapped"}',
      '{"level":"warn","msg":"after"}',
    ].join('\n');
    expect(etcdFailure(output)).toBe('discovery failed: member has already been bootstrapped');
  });

  it('finds nothing in output without a severe line', () => {
    expect(etcdFailure('2026-12-06 08:56:41.1 W | etcdserver: slow\n{"level":"info","msg":"x"}\n{not json')).toBe(
      undefined,
    );
  });

  it('never throws, whatever the output', () =>
    fc.assert(fc.property(fc.string(), (output) => void etcdFailure(output))));
});

describe('OutputTail', () => {
  it('keeps the last characters written', () => {
    const tail = new OutputTail(5);
    tail.push('abc');
    tail.push(Buffer.from('defg'));
    expect(tail.toString()).toBe('cdefg');
  });
});
