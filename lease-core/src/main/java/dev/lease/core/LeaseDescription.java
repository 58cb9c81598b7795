package dev.lease.core;

import dev.lease.LeaseKind;

/**
 * A lease as {@link LeaseEngineListener}s see it.
 *
 * @param name the lease name, such as {@code invoice-42}
 * @param nameTemplate how the name was declared, such as {@code invoice-#{#id}}: the low-cardinality name metrics tag
 *        by ({@link dev.lease.LeaseSpec#nameTemplate()})
 * @param kind the lease kind
 * @param backend the id of the backend the lease is routed to
 */
public record LeaseDescription(String name, String nameTemplate, LeaseKind kind, String backend) {
}
