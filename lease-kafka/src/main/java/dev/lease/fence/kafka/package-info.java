/**
 * Fencing Kafka records: {@link dev.lease.fence.kafka.FencedKafkaTemplate} sends them, inside a leased section, in a
 * transaction of a producer whose {@code transactional.id} is derived from the lease name and that is initialised
 * again at every new grant, so that the broker itself refuses the records of a holder that paused past its lease.
 */
package dev.lease.fence.kafka;
