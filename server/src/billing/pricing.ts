import {
  AUTH_FAILURE_WINDOW_SECONDS, AUTH_FAILURES_PER_WINDOW, DEFAULT_TTL_SECONDS, MAX_ID_LENGTH,
  MAX_PUBLISH_STREAMS, MAX_STREAM_ID, MAX_SUBSCRIBE_STREAMS, MAX_TTL_SECONDS, TOKEN_API_BODY_LIMIT_BYTES,
  type PricingPlan, type Role
} from '@rtc/protocol';
import { formatScaled } from './catalog/money.ts';
import type { PlatformData } from './catalog/platform.ts';
import type { PriceList } from './catalog/price-list.ts';
import { ACCESS_TOKEN_TTL_SECONDS, REFRESH_TOKEN_TTL_SECONDS } from '../customers/accounts.ts';

/** docs/reference/token-api.md, "Limits": a revoked grant stops working within about one second. */
const REVOCATION_EFFECT_SECONDS = 1;

/** `GET /v1/public/platform/catalog`. */
export interface PlatformCatalog {
  readonly catalog_version: string;
  readonly api_version: 'v1';
  readonly regions: readonly {
    readonly id: string;
    readonly name: string;
    readonly media_hosts: readonly { readonly host: string; readonly port: number }[];
  }[];
  readonly roles: readonly { readonly role: Role; readonly may_publish: boolean; readonly may_subscribe: boolean; readonly description: string }[];
  readonly codecs: PlatformData['codecs'];
  readonly encryption: PlatformData['encryption'];
  readonly limits: {
    readonly token_api: {
      readonly requests_per_minute_per_app_id: number;
      readonly requests_per_minute_per_address: number;
      readonly failed_authentications_per_address: number;
      readonly failed_authentication_window_seconds: number;
      readonly max_request_body_bytes: number;
    };
    readonly token_request: {
      readonly id_min_length: number;
      readonly id_max_length: number;
      readonly max_publish_streams: number;
      readonly max_subscribe_streams: number;
      readonly max_stream_id: number;
    };
    readonly revocation_effect_seconds: number;
  };
  readonly token_lifetimes: {
    readonly default_ttl_seconds: number;
    readonly max_ttl_seconds: number;
    readonly temporary_token_max_ttl_seconds: number;
    readonly console_access_token_seconds: number;
    readonly console_refresh_token_seconds: number;
  };
}

/** `GET /v1/public/pricing/plans`. */
export interface PricingPlans {
  readonly price_list_version: string;
  readonly plans: readonly PricingPlan[];
}

/** `GET /v1/public/pricing/rates`. */
export interface PricingRates {
  readonly price_list_version: string;
  readonly unit_minutes: number;
  readonly usage_kinds: readonly {
    readonly id: string;
    readonly name: string;
    readonly medium: 'audio' | 'video' | 'relay';
    readonly max_pixels: number | null;
    readonly description: string;
  }[];
  readonly rates: readonly {
    readonly plan: string;
    readonly usage_kind: string;
    readonly currency: string;
    readonly unit_price_minor: number;
    /** Exact price of one minute in major units, as a decimal string. */
    readonly per_minute: string;
  }[];
}

/** `GET /v1/public/pricing/discount`. */
export interface PricingDiscount {
  readonly price_list_version: string;
  readonly basis: 'total_minutes';
  readonly applies_to: 'usage_subtotal';
  readonly tiers: readonly { readonly from_minutes: number; readonly up_to_minutes: number | null; readonly discount_bps: number }[];
}

/** `GET /v1/public/pricing/currencies`. */
export interface PricingCurrencies {
  readonly price_list_version: string;
  readonly base_currency: string;
  readonly rates_as_of: string;
  readonly currencies: readonly { readonly code: string; readonly name: string; readonly minor_units: number; readonly per_base: string }[];
}

/** What the catalog reports about this deployment, read once from the configuration. */
export interface CatalogSettings {
  /** The media hosts token responses name: the configured one, or a cluster's live media nodes. */
  readonly mediaHosts: readonly { readonly host: string; readonly port: number }[];
  readonly appRequestsPerMinute: number;
  readonly addressRequestsPerMinute: number;
  readonly temporaryTokenMaxTtlSeconds: number;
}

/**
 * `GET /v1/public/platform/catalog`: regions and their media hosts (this deployment serves one
 * region, whose media hosts are those token responses name), roles, codecs, the limits of docs/reference/token-api.md
 * as this deployment applies them, and token lifetimes.
 */
export function platformCatalog(platform: PlatformData, settings: CatalogSettings): PlatformCatalog {
  return {
    catalog_version: platform.version,
    api_version: 'v1',
    regions: [{ id: 'default', name: 'Default region', media_hosts: settings.mediaHosts.map(({ host, port }) => ({ host, port })) }],
    roles: platform.roles.map((r) => ({ role: r.role, may_publish: r.may_publish, may_subscribe: r.may_subscribe, description: r.description })),
    codecs: { audio: [...platform.codecs.audio], video: [...platform.codecs.video] },
    encryption: [...platform.encryption],
    limits: {
      token_api: {
        requests_per_minute_per_app_id: settings.appRequestsPerMinute,
        requests_per_minute_per_address: settings.addressRequestsPerMinute,
        failed_authentications_per_address: AUTH_FAILURES_PER_WINDOW,
        failed_authentication_window_seconds: AUTH_FAILURE_WINDOW_SECONDS,
        max_request_body_bytes: TOKEN_API_BODY_LIMIT_BYTES,
      },
      token_request: {
        id_min_length: 1,
        id_max_length: MAX_ID_LENGTH,
        max_publish_streams: MAX_PUBLISH_STREAMS,
        max_subscribe_streams: MAX_SUBSCRIBE_STREAMS,
        max_stream_id: MAX_STREAM_ID,
      },
      revocation_effect_seconds: REVOCATION_EFFECT_SECONDS,
    },
    token_lifetimes: {
      default_ttl_seconds: DEFAULT_TTL_SECONDS,
      max_ttl_seconds: MAX_TTL_SECONDS,
      temporary_token_max_ttl_seconds: settings.temporaryTokenMaxTtlSeconds,
      console_access_token_seconds: ACCESS_TOKEN_TTL_SECONDS,
      console_refresh_token_seconds: REFRESH_TOKEN_TTL_SECONDS,
    },
  };
}

/** `GET /v1/public/pricing/plans`. */
export function pricingPlans(list: PriceList): PricingPlans {
  return {
    price_list_version: list.version,
    plans: list.plans.map((p) => ({
      id: p.id, name: p.name, description: p.description, currency: p.currency, monthly_fee_minor: p.monthly_fee_minor,
      included_minutes: Object.fromEntries(list.usage_kinds.map((k) => [k.id, p.included_minutes[k.id] ?? 0])),
    })),
  };
}

/** `GET /v1/public/pricing/rates`: every plan's price of every usage kind. */
export function pricingRates(list: PriceList): PricingRates {
  const minorUnits = new Map(list.currencies.map((c) => [c.code, c.minor_units]));
  // unit_minutes is a power of ten (checked when the price list loads): the price of a minute is exact
  const digits = String(list.unit_minutes).length - 1;
  return {
    price_list_version: list.version,
    unit_minutes: list.unit_minutes,
    usage_kinds: list.usage_kinds.map((k) => ({ id: k.id, name: k.name, medium: k.medium, max_pixels: k.max_pixels, description: k.description })),
    rates: list.plans.flatMap((plan) => list.usage_kinds.map((kind) => {
      const price = plan.unit_prices_minor[kind.id] ?? 0;
      const scale = (minorUnits.get(plan.currency) ?? 0) + digits;
      return {
        plan: plan.id, usage_kind: kind.id, currency: plan.currency, unit_price_minor: price,
        per_minute: formatScaled(BigInt(price), scale),
      };
    })),
  };
}

/** `GET /v1/public/pricing/discount`. */
export function pricingDiscount(list: PriceList): PricingDiscount {
  return {
    price_list_version: list.version,
    basis: 'total_minutes',
    applies_to: 'usage_subtotal',
    tiers: list.volume_discount.tiers.map((t) => ({ from_minutes: t.from_minutes, up_to_minutes: t.up_to_minutes, discount_bps: t.discount_bps })),
  };
}

/** `GET /v1/public/pricing/currencies`. */
export function pricingCurrencies(list: PriceList): PricingCurrencies {
  return {
    price_list_version: list.version,
    base_currency: list.base_currency,
    rates_as_of: list.exchange_rates_as_of,
    currencies: list.currencies.map((c) => ({ code: c.code, name: c.name, minor_units: c.minor_units, per_base: c.per_base })),
  };
}
