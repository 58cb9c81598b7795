package dev.lease.samples.leader;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.stereotype.Component;

/**
 * Sends the outbox's messages, polling it on a thread of its own between {@link #start()} and {@link #stop()}. It
 * stands for any listener container (JMS, Kafka, a queue poller): it knows nothing of leadership and does not start
 * by itself; {@link RelayOnLeadership} starts it on the leader only.
 *
 * <p>Delivery is at least once, as with any relay: a message is marked sent after it was handed over, and a relay
 * stopped or paused in between leaves it to be sent again by the next leader. Consumers deduplicate by message id.
 */
@Component
public class OutboxRelay implements DisposableBean {

    private static final Log log = LogFactory.getLog(OutboxRelay.class);

    private final Reminders reminders;
    private final String instance;
    private final Duration pollEvery;
    private Thread poller;
    private CountDownLatch stopSignal;

    OutboxRelay(Reminders reminders, @Value("${reminders.instance}") String instance,
            @Value("${reminders.relay-poll:100ms}") Duration pollEvery) {
        this.reminders = reminders;
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
                for (Reminders.Message message : reminders.unsent(10)) {
                    if (stopSignal.getCount() == 0) {
                        return;
                    }
                    send(message);
                    reminders.markSent(message.id(), instance);
                }
            }
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
        catch (RuntimeException ex) {
            // The database is unreachable, say: a real container would retry; the demo's relay stops.
            log.warn("The outbox relay of " + instance + " stopped: " + ex);
        }
    }

    /** Stands for handing the message to the mail gateway. */
    private void send(Reminders.Message message) {
        if (log.isDebugEnabled()) {
            log.debug(instance + " sends reminder batch " + message.batch() + " (message " + message.id() + ")");
        }
    }
}
