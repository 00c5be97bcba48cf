export const API_BUNDLE: string;
export function newest(dir: string): number;
export function apiBundleStale(): boolean;
export function ensureApiBundle(): Promise<string>;
export function tuneApiHeap(): void;
