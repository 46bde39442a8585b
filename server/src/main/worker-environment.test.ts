import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../config.ts';
import { workerEnvironment } from './worker-environment.ts';

describe('what rtc serve tells each media worker', () => {
  const fields = ['RTC_ROLES', 'RTC_MEDIA_WORKER_INDEX', 'RTC_MEDIA_PORT', 'RTC_MEDIA_PUBLIC_PORT', 'RTC_ADMIN_PORT', 'RTC_MEDIA_UDP_PORT_MIN', 'RTC_MEDIA_UDP_PORT_MAX', 'RTC_MEDIA_RELAY_PORT'];
  const told = (env: Record<string, string>, index: number): Record<string, string | undefined> => {
    const own = workerEnvironment(loadConfig(env), env, index, Number(env['RTC_MEDIA_WORKERS']));
    return Object.fromEntries(fields.map((f) => [f, own[f]]));
  };

  it('gives each its own consecutive ports (media, public, admin, relay) and a share of the UDP range that no other worker uses', () => {
    const env = {
      RTC_MEDIA_WORKERS: '3', RTC_MEDIA_PORT: '7880', RTC_MEDIA_PUBLIC_PORT: '443', RTC_ADMIN_PORT: '9100',
      RTC_MEDIA_UDP_PORT_MIN: '40000', RTC_MEDIA_UDP_PORT_MAX: '40299', RTC_MEDIA_RELAY_PORT: '7990',
    };
    assert.deepEqual([0, 1, 2].map((i) => told(env, i)), [0, 1, 2].map((i) => ({
      RTC_ROLES: 'media', RTC_MEDIA_WORKER_INDEX: String(i), RTC_MEDIA_PORT: String(7880 + i), RTC_MEDIA_PUBLIC_PORT: String(443 + i),
      RTC_ADMIN_PORT: String(9101 + i), RTC_MEDIA_UDP_PORT_MIN: String(40000 + 100 * i), RTC_MEDIA_UDP_PORT_MAX: String(40099 + 100 * i),
      RTC_MEDIA_RELAY_PORT: String(7990 + i),
    })));
  });

  it('lets each worker pick free ports when RTC_MEDIA_PORT is 0', () => {
    assert.deepEqual(told({ RTC_MEDIA_WORKERS: '2', RTC_MEDIA_PORT: '0', RTC_ADMIN_PORT: '0' }, 1), {
      RTC_ROLES: 'media', RTC_MEDIA_WORKER_INDEX: '1', RTC_MEDIA_PORT: '0', RTC_ADMIN_PORT: '0',
      RTC_MEDIA_PUBLIC_PORT: undefined, RTC_MEDIA_UDP_PORT_MIN: undefined, RTC_MEDIA_UDP_PORT_MAX: undefined, RTC_MEDIA_RELAY_PORT: '0',
    });
  });
});
