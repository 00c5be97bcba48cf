/** The worker's hardware and runtime probe: `probeCapabilities` plus the parsers it is built from. */
export type { Accelerator, Capabilities, ExecFn, ExecOptions, ExecResult, PythonRuntime, Workload } from './types.js';
export type { AmdGpu, AmdProbeResult, NvidiaGpu, NvidiaSmiResult } from './gpuTypes.js';
export { probeCapabilities, type ProbeOptions } from './probeCapabilities.js';
export { execCommand } from './execCommand.js';
export { parseNvidiaSmiCsv, NVIDIA_QUERY_FIELDS, NVIDIA_QUERY_FIELDS_OLD } from './parseNvidiaSmiCsv.js';
export { parseNvidiaSmiTable } from './parseNvidiaSmiTable.js';
export { parseNvidiaSmiXml } from './parseNvidiaSmiXml.js';
export { parseRocmSmi } from './parseRocmSmi.js';
export { parseRocminfo } from './parseRocminfo.js';
export { parseAmdSmi } from './parseAmdSmi.js';
export { parseSysctl, sysctlInfo } from './parseSysctl.js';
export { parseCollectEnv, type CollectEnv } from './parseCollectEnv.js';
export { PYTHON_PROBE_SCRIPT, parsePythonProbe, probePython, type PythonProbe } from './pythonProbe.js';
export { pythonCandidates } from './pythonCandidates.js';
export { choosePython } from './choosePython.js';
export { deriveWorkloads } from './deriveWorkloads.js';
export { parseHipccVersion, parseNvccVersion, probeToolchains } from './toolchains.js';
