package dev.lease.faults.scenarios.kafka;

import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;

import org.apache.kafka.common.errors.InvalidProducerEpochException;
import org.apache.kafka.common.errors.ProducerFencedException;
import org.springframework.kafka.core.DefaultKafkaProducerFactory;

import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.faults.harness.ZooKeeperHolder;
import dev.lease.faults.workload.HolderMain;
import dev.lease.fence.StaleTokenException;
import dev.lease.fence.kafka.FencedKafkaTemplate;

/**
 * A relay instance in a JVM of its own, so that the parent can pause it for real ({@code kill -STOP}): one section
 * under a ZooKeeper lease that publishes through a {@link FencedKafkaTemplate} to the parent's embedded broker. The
 * section first commits one record ({@code held@<token>}, visible: it was committed while held), then opens a second
 * transaction and stops at its pause point ({@code at=open-transaction}: after a record of it reached the broker,
 * before the commit; {@code at=before-send}: the transaction begun, before its first record), prints
 * {@code PAUSE_POINT <token>} and waits for {@code go} on stdin, deaf to interrupts as a stopped process is (each one
 * printed as {@code INT <token>}). Then it sends one more record and commits, and prints how that ended:
 * {@code OUTCOME COMMITTED <token>}, {@code OUTCOME STALE <token> <resource> <broker|store> <message>}
 * ({@link StaleTokenException}, {@code broker} when a Kafka error of a fenced producer caused it) or
 * {@code OUTCOME FAILED <token> <error>}; then {@code BYE}, and it exits. Event lines start with
 * {@link HolderMain#PREFIX}, as {@link HolderMain}'s do. Arguments are {@code key=value}: {@code connect},
 * {@code session-ms}, {@code lease}, {@code bootstrap}, {@code topic}, {@code prefix} (of the transactional id) and
 * {@code at}.
 */
final class KafkaHolderMain {

    static final String PREFIX = HolderMain.PREFIX;

    private KafkaHolderMain() {
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> conf = new HashMap<>();
        for (String arg : args) {
            int eq = arg.indexOf('=');
            conf.put(arg.substring(0, eq), arg.substring(eq + 1));
        }
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, StandardCharsets.UTF_8);
        Duration session = Duration.ofMillis(Long.parseLong(conf.get("session-ms")));
        boolean openTransaction = conf.get("at").equals("open-transaction");
        String topic = conf.get("topic");
        String key = conf.get("lease");
        Semaphore go = new Semaphore(0);
        Thread control = new Thread(() -> control(go), "kafka-holder-control");
        control.setDaemon(true);
        control.start();
        DefaultKafkaProducerFactory<String, String> factory = KafkaRelay.producerFactory(conf.get("bootstrap"));
        try (ZooKeeperHolder zookeeper = ZooKeeperHolder.connect(conf.get("connect"), session);
                FencedKafkaTemplate<String, String> template = new FencedKafkaTemplate<>(factory, conf.get("prefix"))) {
            out.println(PREFIX + "READY");
            LeaseSpec spec = LeaseSpec.of(conf.get("lease"), LeaseKind.CORRECTNESS).withTtl(session)
                    .withWaitFor(session.multipliedBy(15));
            zookeeper.engine().execute(spec, lease -> {
                long token = lease.token().value();
                out.println(PREFIX + "GRANTED " + token);
                template.send(topic, key, "held@" + token);
                try {
                    template.executeInTransaction(sender -> {
                        int sent = 0;
                        if (openTransaction) {
                            awaitWritten(sender.send(topic, key, "stale-" + sent++ + "@" + token));
                        }
                        out.println(PREFIX + "PAUSE_POINT " + token);
                        awaitGoDeaf(go, out, token);
                        // As the process it models, it goes on without having looked at the loss.
                        Thread.interrupted();
                        return sender.send(topic, key, "stale-" + sent + "@" + token);
                    });
                    out.println(PREFIX + "OUTCOME COMMITTED " + token);
                }
                catch (StaleTokenException stale) {
                    out.println(PREFIX + "OUTCOME STALE " + token + " " + stale.resource() + " "
                            + (refusedByBroker(stale) ? "broker" : "store") + " " + oneLine(stale));
                }
                catch (RuntimeException ex) {
                    out.println(PREFIX + "OUTCOME FAILED " + token + " " + oneLine(ex));
                }
                return null;
            });
        }
        catch (LeaseLostException lost) {
            // The engine's report of the loss after the section: the outcome line is what the parent checks.
        }
        finally {
            factory.destroy();
        }
        out.println(PREFIX + "BYE");
        System.exit(0);
    }

    /** The record reached the broker (inside the open transaction), so the pause holds it there. */
    private static void awaitWritten(Future<?> sent) {
        try {
            sent.get();
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted before the first record of the transaction was written", ex);
        }
        catch (ExecutionException ex) {
            throw new IllegalStateException("the first record of the transaction was not written", ex.getCause());
        }
    }

    private static void awaitGoDeaf(Semaphore go, PrintStream out, long token) {
        while (true) {
            try {
                go.acquire();
                return;
            }
            catch (InterruptedException ex) {
                out.println(PREFIX + "INT " + token);
            }
        }
    }

    private static void control(Semaphore go) {
        try (BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                if (line.equals("go")) {
                    go.release();
                }
            }
        }
        catch (IOException ex) {
            // The parent went away.
        }
        // Without a parent nobody says go: the section must not keep the JVM alive.
        go.release();
    }

    /** Whether the broker refused the producer's epoch, rather than the lease store the grant. */
    private static boolean refusedByBroker(Throwable error) {
        for (Throwable cause = error; cause != null; cause = cause.getCause()) {
            if (cause instanceof ProducerFencedException || cause instanceof InvalidProducerEpochException) {
                return true;
            }
        }
        return false;
    }

    private static String oneLine(Throwable ex) {
        return String.valueOf(ex).replace('\n', ' ').replace('\r', ' ');
    }
}
