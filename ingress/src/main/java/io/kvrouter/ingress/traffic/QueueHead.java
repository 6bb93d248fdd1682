package io.kvrouter.ingress.traffic;

import io.kvrouter.protocol.CborWire;

/**
 * What one ingress's router queue is waiting with for one model: the most pressing priority among
 * its waiters, or null when none waits. Published to the other ingresses whenever it changes and
 * again periodically (so a lost or stale one expires); low rate, Jackson CBOR.
 *
 * @param ingress the publishing ingress's id
 * @param model the model its waiters ask for
 * @param priority the most pressing waiting priority, or null for none
 */
public record QueueHead(String ingress, String model, Integer priority) implements CborWire {}
