/**
 * nvidia-smi prints its own failures on stdout with exit status 0 or 9 depending on the version, so
 * every parser first asks whether the text is one of them. Returns the message, or null.
 */
const FAILURES = [
  /NVIDIA-SMI has failed[^\n]*/i,
  /No devices were found[^\n]*/i,
  /Failed to initialize NVML[^\n]*/i,
  /Unable to determine the device handle[^\n]*/i,
  /couldn't communicate with the NVIDIA driver[^\n]*/i,
  /Field "[^"]+" is not a valid field to query[^\n]*/i,
];

export function nvidiaSmiFailure(text: string): string | null {
  for (const re of FAILURES) {
    const m = re.exec(text);
    if (m) return m[0].trim();
  }
  return null;
}
