import type { Config } from '../config.ts';

/**
 * What worker `index` of `count` is told: the media role alone, its own port (consecutive from
 * RTC_MEDIA_PORT, or a free one for 0), its relay port (likewise), its share of the UDP range and its own admin port.
 */
export function workerEnvironment(config: Config, env: NodeJS.ProcessEnv, index: number, count: number): NodeJS.ProcessEnv {
  const next = (port: number): string => String(port === 0 ? 0 : port + index);
  const own: NodeJS.ProcessEnv = { ...env, RTC_ROLES: 'media', RTC_MEDIA_WORKER_INDEX: String(index), RTC_MEDIA_PORT: next(config.ports.media) };
  if (config.media.publicPort !== undefined) own['RTC_MEDIA_PUBLIC_PORT'] = next(config.media.publicPort);
  // each worker's relay datagrams on a port of its own, consecutive like the media ports
  own['RTC_MEDIA_RELAY_PORT'] = next(config.media.relay.port);
  // the parent's admin port stays its own; worker i takes the i + 1 after it
  if (config.admin) own['RTC_ADMIN_PORT'] = String(config.admin.port === 0 ? 0 : config.admin.port + 1 + index);
  const range = config.rtc?.portRange;
  if (range) {
    const share = Math.floor((range[1] - range[0] + 1) / count);
    own['RTC_MEDIA_UDP_PORT_MIN'] = String(range[0] + index * share);
    own['RTC_MEDIA_UDP_PORT_MAX'] = String(range[0] + (index + 1) * share - 1);
  }
  return own;
}
