import { describe, expect, it } from 'vitest';
import { fixture } from '../../test/fixtures/fixture.js';
import { parseNvidiaSmiXml } from './parseNvidiaSmiXml.js';
import { parseXml } from './parseXml.js';

describe('parseNvidiaSmiXml', () => {
  it("reads GPUs in order with their own memory (not a MIG instance's) and MIG instances", () => {
    const r = parseNvidiaSmiXml(fixture('nvidia-smi-q-x.xml'));
    expect(r).toMatchObject({ driver: '550.54.14', cuda: '12.4', error: null });
    expect(r.gpus).toHaveLength(2);
    expect(r.gpus[0]).toMatchObject({
      index: 0, // minor_number 3 is not the index
      name: 'NVIDIA A30',
      memoryMiB: 24576,
      arch: 'sm_80',
      migEnabled: true,
      migDevices: [
        { index: 0, memoryMiB: 11968 },
        { index: 1, memoryMiB: 11968 },
      ],
    });
    expect(r.gpus[1]).toMatchObject({
      name: 'NVIDIA GeForce RTX 2080 Ti & friends',
      memoryMiB: 11264,
      arch: 'sm_75',
      migEnabled: false,
      migDevices: [],
    });
  });

  it('turns malformed XML into an error', () => {
    expect(parseNvidiaSmiXml('<nvidia_smi_log><gpu></nvidia_smi_log>').error).toMatch(/unreadable/);
    expect(parseNvidiaSmiXml('<other/>').error).toMatch(/no <nvidia_smi_log>/);
    expect(parseNvidiaSmiXml(fixture('nvidia-smi-nvml-mismatch.txt')).error).toMatch(/NVML/);
  });

  it('parseXml handles attributes, entities, CDATA and self-closing tags', () => {
    const doc = parseXml(`<?xml version="1.0"?><a x='1' y="&lt;2&gt;"><b/><c><![CDATA[<raw>]]>&#65;&#x42;</c></a>`);
    const a = doc.children[0]!;
    expect(a.attrs).toEqual({ x: '1', y: '<2>' });
    expect(a.children.map((c) => c.name)).toEqual(['b', 'c']);
    expect(a.children[1]!.text).toBe('<raw>AB');
  });
});
