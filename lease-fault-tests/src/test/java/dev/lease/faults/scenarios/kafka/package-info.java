/**
 * Fault scenarios with Kafka as the fenced sink: records published through {@code FencedKafkaTemplate} under
 * ZooKeeper leases, checked by a {@code read_committed} consumer.
 */
package dev.lease.faults.scenarios.kafka;
