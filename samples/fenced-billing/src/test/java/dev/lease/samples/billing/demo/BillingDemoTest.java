package dev.lease.samples.billing.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import org.junit.jupiter.api.Test;

import dev.lease.samples.billing.BillingEvent;
import dev.lease.samples.billing.BillingEvent.Kind;
import dev.lease.samples.billing.Invoices.Charge;

/**
 * Runs the whole demo, as {@code spring-boot:run} does, and checks its story against what really happened: the
 * instance cut off from ZooKeeper is interrupted and writes nothing, the frozen one's stale write is refused by the
 * table, and every invoice is billed exactly once, by the instance that held the higher token.
 */
class BillingDemoTest {

    private static final long FACTOR = Math.max(1, Long.getLong("lease-test.time-factor", 1));

    @Test
    void theInterruptStopsALostSessionAndTheFenceStopsAFrozenHolder() throws Exception {
        assumeTrue(FrozenHolderProcess.supported(), "kill -STOP needs Linux or macOS");
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        PrintStream out = new PrintStream(printed, true, StandardCharsets.UTF_8);
        // Longer sessions on a slow machine: a healthy instance must not lose its lease to a CPU stall, and must
        // connect within the session (the connection timeout may not exceed it): 4 s was too short for a start in a
        // CI run at load 15.
        String session = (6 * FACTOR) + "s";
        BillingDemo.Result result = new BillingDemo(out, Path.of("target"), Duration.ofSeconds(90 * FACTOR))
                .run("--lease.zookeeper.session-timeout=" + session, "--lease.zookeeper.connection-timeout=" + session,
                        "--lease.default-ttl=" + session);
        System.out.println(printed.toString(StandardCharsets.UTF_8));

        assertThat(result.problems()).isEmpty();
        long first = result.interruptedInvoice();
        long second = result.frozenInvoice();

        // Scene 1: A lost its lease while pricing, was interrupted, and never wrote; B billed with a higher token.
        BillingEvent aHeld = only(result, "A", Kind.HOLDS, first);
        only(result, "A", Kind.LOST, first);
        assertThat(events(result, "A", Kind.ACCEPTED)).isEmpty();
        BillingEvent bFirst = only(result, "B", Kind.ACCEPTED, first);
        assertThat(bFirst.token()).isGreaterThan(aHeld.token());

        // Scene 2: C's write with its old token was refused; B, which took over with a higher token, billed.
        BillingEvent cHeld = only(result, "C", Kind.HOLDS, second);
        only(result, "C", Kind.REJECTED, second);
        assertThat(events(result, "C", Kind.ACCEPTED)).isEmpty();
        assertThat(result.frozenHolderExit()).isEqualTo(FrozenHolder.REJECTED);
        BillingEvent bSecond = only(result, "B", Kind.ACCEPTED, second);
        assertThat(bSecond.token()).isGreaterThan(cHeld.token());

        // The tables: one charge per invoice, written by B with the token it held; nothing billed twice.
        assertThat(result.charges()).containsExactlyInAnyOrder(
                new Charge(first, 12_000, "B", bFirst.token()), new Charge(second, 34_500, "B", bSecond.token()));
        assertThat(result.invoices()).allSatisfy(invoice -> {
            assertThat(invoice.isBilled()).isTrue();
            assertThat(invoice.billedBy()).isEqualTo("B");
        });
        assertThat(result.billedTwice()).isEmpty();

        assertThat(Files.readString(result.picture())).contains("<svg").contains("StaleTokenException");
        assertThat(printed.toString(StandardCharsets.UTF_8)).contains("No invoice was billed twice");
    }

    private static BillingEvent only(BillingDemo.Result result, String instance, Kind kind, long invoiceId) {
        List<BillingEvent> matching = events(result, instance, kind).stream()
                .filter(e -> e.invoiceId() == invoiceId).toList();
        assertThat(matching).as(instance + " " + kind + " invoice " + invoiceId).hasSize(1);
        return matching.get(0);
    }

    private static List<BillingEvent> events(BillingDemo.Result result, String instance, Kind kind) {
        return result.timeline().stream().map(Timeline.Entry::event)
                .filter(e -> e.instance().equals(instance) && e.kind() == kind).toList();
    }
}
