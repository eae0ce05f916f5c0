import { link } from '../../../../shared/links.ts';
import { route as trigger } from '../../webhooks/trigger.route.ts';

/** A webhook's trigger URL, on the service's public address. */
export const triggerUrl = (webhookId: string) => link(trigger.path, { webhookId });
