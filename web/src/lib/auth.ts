/**
 * The session token (a bearer token from signUp/logIn), kept in localStorage so a
 * reload stays signed in. A tiny external store: React reads it with useSyncExternalStore.
 */
import { useSyncExternalStore } from 'react';

const KEY = 'chatgpu.token';
const listeners = new Set<() => void>();

function read(): string | null {
  try {
    return localStorage.getItem(KEY);
  } catch {
    return null;
  }
}

let current = read();

export function getToken(): string | null {
  return current;
}

export function setToken(token: string | null): void {
  current = token;
  try {
    if (token) localStorage.setItem(KEY, token);
    else localStorage.removeItem(KEY);
  } catch {
    /* private mode: the session lasts as long as the tab */
  }
  for (const l of [...listeners]) l();
}

function subscribe(l: () => void): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}

export function useToken(): string | null {
  return useSyncExternalStore(subscribe, getToken);
}

export function authHeaders(): Record<string, string> {
  return current ? { authorization: `Bearer ${current}` } : {};
}
