import type { DomainEvent } from '../domain/events.js';
import type { RecordedEvent } from '../store/port.js';

/** A recorded event whose `type` narrows `data`, for switch statements in read models. */
export type RecordedDomainEvent = { [E in DomainEvent as E['type']]: RecordedEvent<E['type'], E['data']> }[DomainEvent['type']];

/** The store holds only events this service wrote, so its records are domain events. */
export const asDomain = (event: RecordedEvent) => event as RecordedDomainEvent;
