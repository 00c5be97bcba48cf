/**
 * Content-addressed blobs: hash in the browser (WebCrypto), PUT /blobs/<sha256> with
 * upload progress (XMLHttpRequest: fetch has no upload progress), and authenticated
 * downloads (the API wants a bearer token, which a plain <a href> cannot send).
 */
import { authHeaders } from './auth';

export async function sha256Hex(data: ArrayBuffer): Promise<string> {
  const digest = await crypto.subtle.digest('SHA-256', data);
  return [...new Uint8Array(digest)].map((b) => b.toString(16).padStart(2, '0')).join('');
}

export class UploadError extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message);
  }
}

export function putBlob(
  sha256: string,
  body: Blob | ArrayBuffer,
  onProgress: (loaded: number) => void,
  signal?: AbortSignal,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const xhr = new XMLHttpRequest();
    xhr.open('PUT', `/blobs/${sha256}`);
    for (const [k, v] of Object.entries(authHeaders())) xhr.setRequestHeader(k, v);
    xhr.setRequestHeader('content-type', 'application/octet-stream');
    xhr.upload.onprogress = (e) => onProgress(e.loaded);
    xhr.onload = () => {
      if (xhr.status >= 200 && xhr.status < 300) return resolve();
      let message = `Upload failed (HTTP ${xhr.status}).`;
      try {
        message = (JSON.parse(xhr.responseText) as { error?: { message?: string } }).error?.message ?? message;
      } catch {
        /* not JSON */
      }
      reject(new UploadError(message, xhr.status));
    };
    xhr.onerror = () => reject(new UploadError('The API could not be reached during the upload.', 0));
    xhr.onabort = () => reject(new UploadError('Upload cancelled.', 0));
    signal?.addEventListener('abort', () => xhr.abort());
    xhr.send(body);
  });
}

/** A blob's content, fetched with the session token (`name`: the file it is, for the API's Content-Disposition). */
export async function fetchBlob(sha256: string, name: string): Promise<Blob> {
  const res = await fetch(`/blobs/${sha256}?download=${encodeURIComponent(name)}`, { headers: authHeaders() });
  if (!res.ok) throw new Error(res.status === 404 ? 'This file is no longer available.' : `Download failed (HTTP ${res.status}).`);
  return res.blob();
}

/** Downloads a blob with the session token and saves it under `name`. */
export async function downloadBlob(sha256: string, name: string): Promise<void> {
  saveBlob(await fetchBlob(sha256, name), name.split('/').pop() ?? name);
}

/**
 * All of a job's outputs as one .tar.gz (GET /jobs/<id>/outputs.tar.gz, built by the API
 * on request), saved under the name the API gives in Content-Disposition.
 */
export async function downloadOutputsArchive(jobId: string): Promise<void> {
  const res = await fetch(`/jobs/${encodeURIComponent(jobId)}/outputs.tar.gz`, { headers: authHeaders() });
  if (!res.ok) {
    let message = `Download failed (HTTP ${res.status}).`;
    try {
      message = ((await res.json()) as { error?: { message?: string } }).error?.message ?? message;
    } catch {
      /* not JSON */
    }
    throw new Error(message);
  }
  const name = /filename="([^"]+)"/.exec(res.headers.get('content-disposition') ?? '')?.[1] ?? 'outputs.tar.gz';
  saveBlob(await res.blob(), name);
}

function saveBlob(blob: Blob, name: string): void {
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 60_000);
}
