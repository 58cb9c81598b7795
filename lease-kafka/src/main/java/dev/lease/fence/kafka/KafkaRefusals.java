package dev.lease.fence.kafka;

import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.ProducerFencedException;

import dev.lease.FencingToken;
import dev.lease.fence.StaleTokenException;

/** Which Kafka errors mean that the broker fenced the producer, and how the holder hears of it. */
final class KafkaRefusals {

    private KafkaRefusals() {
    }

    /** Whether the broker refused the producer's epoch: a later initialisation of its transactional id fenced it. */
    static boolean fenced(Throwable error) {
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (cause instanceof ProducerFencedException || cause instanceof InvalidProducerEpochException) {
                return true;
            }
            if (cause.getCause() == cause) {
                break;
            }
        }
        return false;
    }

    static StaleTokenException refusedByBroker(String transactionalId, FencingToken token, Throwable error) {
        return new StaleTokenException(transactionalId, token, "the broker fenced its producer (a later holder "
                + "initialised the transactional id again) and aborted its transaction: none of its records become "
                + "visible to read_committed consumers", error);
    }

    static StaleTokenException notConfirmed(String transactionalId, FencingToken token, RuntimeException error) {
        return new StaleTokenException(transactionalId, token, "the lease store no longer holds its grant after its "
                + "producer was initialised, so a successor may already send; nothing was sent", error);
    }
}
