import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../config.js';
import { serviceApiUrl, serviceBase, serviceOriginUrl, slugOfHost } from './serviceOrigin.js';

const SLUG = '0123456789abcdef';

describe('service origins', () => {
  it('default to svc.localhost on the bound port, else svc. under the public URL, else SERVICE_PUBLIC_URL', () => {
    expect(serviceOriginUrl(serviceBase(undefined, undefined, 4000), SLUG)).toBe(`http://${SLUG}.svc.localhost:4000/`);
    expect(serviceOriginUrl(serviceBase(undefined, 'https://gpu.example.com', 4000), SLUG)).toBe(`https://${SLUG}.svc.gpu.example.com/`);
    expect(serviceOriginUrl(serviceBase(undefined, 'http://127.0.0.1:4100', 4000), SLUG)).toBe(`http://${SLUG}.svc.localhost:4100/`); // an address has no subdomains
    expect(serviceOriginUrl(serviceBase(undefined, 'http://[::1]:4100', 4000), SLUG)).toBe(`http://${SLUG}.svc.localhost:4100/`);
    expect(serviceOriginUrl(serviceBase('https://apps.example.net:8443', 'https://gpu.example.com', 4000), SLUG)).toBe(
      `https://${SLUG}.apps.example.net:8443/`,
    );
    expect(serviceApiUrl('http://localhost:4000/', SLUG)).toBe(`http://localhost:4000/svc/${SLUG}/`);
  });

  it('a Host header names a service only under the suffix (any port, any case); another label under it is a service host that matches none', () => {
    const base = serviceBase(undefined, undefined, 4000);
    expect(slugOfHost(base, `${SLUG}.svc.localhost:4000`)).toBe(SLUG);
    expect(slugOfHost(base, `${SLUG.toUpperCase()}.SVC.localhost`)).toBe(SLUG);
    expect(slugOfHost(base, `${SLUG}.svc.localhost.:443`)).toBe(SLUG);
    expect(slugOfHost(base, 'evil.svc.localhost:4000')).toBe('');
    for (const h of [
      'localhost:4000',
      'svc.localhost:4000',
      `${SLUG}.svc.localhost.example.com`,
      `a.${SLUG}.svc.localhost`,
      `${SLUG}.localhost`,
      undefined,
    ])
      expect(slugOfHost(base, h)).toBeNull();
  });

  it('SERVICE_PUBLIC_URL must be a bare http(s) origin on a host name', () => {
    expect(loadConfig({ SERVICE_PUBLIC_URL: 'https://apps.example.net' }).services.publicUrl).toBe('https://apps.example.net');
    for (const [v, why] of [
      ['apps.example.net', 'not a URL'],
      ['ftp://apps.example.net', 'must be http: or https:'],
      ['https://example.net/apps', 'must be a bare origin'],
      ['http://10.0.0.5:8080', 'not an IP address'],
    ] as const)
      expect(() => loadConfig({ SERVICE_PUBLIC_URL: v })).toThrow(new RegExp(`SERVICE_PUBLIC_URL: .*${why}`));
  });
});
