package dev.lease.samples.payments.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Map;

import org.junit.jupiter.api.Test;

/**
 * Runs the demo as {@code spring-boot:run} does and checks its story: the frozen billing JVM's call is refused with
 * 409 (it sees {@code StaleTokenException} naming both tokens), the successor is paid, and the invoice is paid once.
 */
class PaymentsDemoTest {

    private static final long FACTOR = Math.max(1, Long.getLong("lease-test.time-factor", 1));

    @Test
    void theFrozenInstanceIsRefusedAndTheInvoiceIsPaidOnce() throws Exception {
        assumeTrue(!System.getProperty("os.name", "").toLowerCase(Locale.ROOT).startsWith("windows"),
                "kill -STOP needs Linux or macOS");
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        String session = (4 * FACTOR) + "s";
        PaymentsDemo.Result result = new PaymentsDemo(new PrintStream(printed, true, StandardCharsets.UTF_8),
                Path.of("target"), Duration.ofSeconds(90 * FACTOR))
                .run("--lease.zookeeper.session-timeout=" + session, "--lease.default-ttl=" + session);
        System.out.println(printed.toString(StandardCharsets.UTF_8));

        long tokenOfA = Long.parseLong(result.readyOfA().replace("READY token=", ""));
        assertThat(result.answerToB()).isEqualTo("paid invoice 42 for billing-B");
        assertThat(result.outcomeOfA()).startsWith("REFUSED presented=" + tokenOfA + " current=")
                .endsWith("resource=payment-42");
        long current = Long.parseLong(result.outcomeOfA().replaceAll(".*current=(\\d+).*", "$1"));
        assertThat(current).isGreaterThan(tokenOfA);
        assertThat(result.exitOfA()).isEqualTo(FrozenBilling.REFUSED);
        assertThat(result.payments()).containsExactly(
                Map.of("INVOICE", 42L, "AMOUNT", 12_000L, "PAID_FOR", "billing-B"));
    }
}
