package dev.lease.samples.leader;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

import dev.lease.LeaseLostException;

/**
 * Sends the outbox's messages to Kafka, polling it on a thread of its own between {@link #start()} and
 * {@link #stop()}. It stands for any listener container (JMS, Kafka, a queue poller): it does not start by itself;
 * {@link RelayOnLeadership} starts it on the leader only. Each poll hands the next batch to
 * {@link OutboxPublisher#publishNextBatch()}, which runs under the current term's lease: that, not the start and stop,
 * is what fences it, since a relay learns late that its term ended.
 *
 * <p>Delivery is at least once, as with any relay: a message is marked sent after its Kafka transaction committed,
 * and a relay stopped or paused in between leaves it to be sent again by the next leader. Consumers deduplicate by
 * the record's key, the message id. What the fence removes is the other duplicate: a former leader's relay
 * publishing a batch beside its successor's.
 */
@Component
public class OutboxRelay implements DisposableBean {

    private static final Log log = LogFactory.getLog(OutboxRelay.class);

    private final OutboxPublisher publisher;
    private final String instance;
    private final Duration pollEvery;
    private Thread poller;
    private CountDownLatch stopSignal;

    OutboxRelay(OutboxPublisher publisher, @Value("${reminders.instance}") String instance,
            @Value("${reminders.relay-poll:100ms}") Duration pollEvery) {
        this.publisher = publisher;
        this.instance = instance;
        this.pollEvery = pollEvery;
    }

    /** Starts polling; does nothing when already running. */
    public synchronized void start() {
        if (poller != null) {
            return;
        }
        CountDownLatch signal = new CountDownLatch(1);
        stopSignal = signal;
        poller = new Thread(() -> poll(signal), "outbox-relay-" + instance);
        poller.setDaemon(true);
        poller.start();
    }

    /** Stops polling and waits for the message in hand, if any, to be done; does nothing when not running. */
    public void stop() {
        Thread stopping;
        synchronized (this) {
            if (poller == null) {
                return;
            }
            stopping = poller;
            // A signal rather than an interrupt: the poller may be inside a JDBC call, which an interrupt can break.
            stopSignal.countDown();
            poller = null;
        }
        try {
            stopping.join(Duration.ofSeconds(10).toMillis());
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stops polling when the application context closes, in case no revoked event came first. */
    @Override
    public void destroy() {
        stop();
    }

    /** Whether the relay is polling. */
    public synchronized boolean isRunning() {
        return poller != null;
    }

    private void poll(CountDownLatch stopSignal) {
        try {
            while (!stopSignal.await(pollEvery.toMillis(), TimeUnit.MILLISECONDS)) {
                try {
                    // Empty when this instance does not lead (any more): the revoked event will stop the relay.
                    publisher.publishNextBatch();
                }
                catch (LeaseLostException ex) {
                    // The term ended during the batch (refused by the broker, or interrupted): the next leader's
                    // relay sends what this one did not mark.
                    log.info("The outbox relay of " + instance + " lost its term during a batch: " + ex.getMessage());
                    // The interrupt was for the batch's section, which is over; the stop signal ends the polling.
                    Thread.interrupted();
                }
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        catch (RuntimeException ex) {
            // The database or the broker is unreachable, say: a real container would retry; the demo's relay stops.
            log.warn("The outbox relay of " + instance + " stopped: " + ex);
        }
    }
}
