import { describe, expect, it } from 'vitest';
import { matchesSelector, type LabelSelector } from '../../../core/dwd/index.js';

const labels = { 'gardener.cloud/role': 'controlplane', role: 'controller-manager', app: 'kubernetes' };

describe('matchesSelector', () => {
  it.each<{ name: string; selector: LabelSelector; expected: boolean }>([
    { name: 'empty selector selects everything', selector: {}, expected: true },
    { name: 'matchLabels hit', selector: { matchLabels: { 'gardener.cloud/role': 'controlplane' } }, expected: true },
    {
      name: 'matchLabels wrong value',
      selector: { matchLabels: { 'gardener.cloud/role': 'logging' } },
      expected: false,
    },
    { name: 'matchLabels missing key', selector: { matchLabels: { tier: 'x' } }, expected: false },
    {
      name: 'In hit',
      selector: { matchExpressions: [{ key: 'role', operator: 'In', values: ['controller-manager', 'scheduler'] }] },
      expected: true,
    },
    {
      name: 'In miss',
      selector: { matchExpressions: [{ key: 'role', operator: 'In', values: ['apiserver'] }] },
      expected: false,
    },
    {
      name: 'In on a missing key',
      selector: { matchExpressions: [{ key: 'tier', operator: 'In', values: ['a'] }] },
      expected: false,
    },
    {
      name: 'NotIn hit',
      selector: { matchExpressions: [{ key: 'role', operator: 'NotIn', values: ['apiserver'] }] },
      expected: true,
    },
    {
      name: 'NotIn miss',
      selector: { matchExpressions: [{ key: 'role', operator: 'NotIn', values: ['controller-manager'] }] },
      expected: false,
    },
    {
      name: 'NotIn on a missing key selects',
      selector: { matchExpressions: [{ key: 'tier', operator: 'NotIn', values: ['a'] }] },
      expected: true,
    },
    { name: 'Exists', selector: { matchExpressions: [{ key: 'app', operator: 'Exists' }] }, expected: true },
    { name: 'Exists miss', selector: { matchExpressions: [{ key: 'tier', operator: 'Exists' }] }, expected: false },
    {
      name: 'DoesNotExist',
      selector: { matchExpressions: [{ key: 'tier', operator: 'DoesNotExist' }] },
      expected: true,
    },
    {
      name: 'DoesNotExist miss',
      selector: { matchExpressions: [{ key: 'app', operator: 'DoesNotExist' }] },
      expected: false,
    },
    {
      name: 'all terms must hold',
      selector: {
        matchLabels: { app: 'kubernetes' },
        matchExpressions: [{ key: 'role', operator: 'In', values: ['apiserver'] }],
      },
      expected: false,
    },
    {
      name: 'prototype keys are not labels',
      selector: { matchExpressions: [{ key: 'constructor', operator: 'Exists' }] },
      expected: false,
    },
  ])('$name', ({ selector, expected }) => {
    expect(matchesSelector(labels, selector)).toBe(expected);
  });
});
