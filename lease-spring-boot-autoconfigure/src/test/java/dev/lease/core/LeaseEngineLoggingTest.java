package dev.lease.core;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.slf4j.LoggerFactory;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.memory.InMemoryLeaseBackend;
import dev.lease.testing.BlockingWork;

/** With {@code dev.lease} at DEBUG, the log answers "why didn't it run?"; nothing is logged at INFO per call. */
@ExtendWith(OutputCaptureExtension.class)
class LeaseEngineLoggingTest {

    private final Logger logger = (Logger) LoggerFactory.getLogger("dev.lease");
    private Level level;

    @BeforeEach
    void debug() {
        level = logger.getLevel();
        logger.setLevel(Level.DEBUG);
    }

    @AfterEach
    void restore() {
        logger.setLevel(level);
    }

    @Test
    void acquireSkipAndReleaseAreLoggedAtDebug(CapturedOutput output) throws Throwable {
        InMemoryLeaseBackend memory = new InMemoryLeaseBackend();
        LeaseSpec spec = LeaseSpec.of("nightly-report", LeaseKind.EFFICIENCY);
        long token;
        try (LeaseEngine holder = LeaseEngineTest.engineOver(memory);
                LeaseEngine other = LeaseEngineTest.engineOver(memory)) {
            try (Lease held = holder.acquire(spec)) {
                token = held.token().value();
                String result = other.run(spec.withWaitFor(Duration.ofMillis(200)), lease -> "ran", () -> "skipped");
                assertThat(result).isEqualTo("skipped");
            }
        }
        assertThat(line(output, "Lease 'nightly-report' (token " + token + ") acquired on in-memory after waiting "))
                .contains("DEBUG");
        assertThat(line(output, "Lease 'nightly-report' is held by someone else on in-memory (waited 200ms): "
                + "skipped (whenBusy = SKIP)")).contains("DEBUG");
        assertThat(line(output, "Lease 'nightly-report' (token " + token + ") released on in-memory"))
                .contains("DEBUG");
        assertThat(output.getOut().lines().filter(l -> l.contains(" INFO ") && l.contains("dev.lease.core")))
                .as("INFO lines per call").isEmpty();
    }

    @Test
    void aFailedRenewalIsLoggedAtDebugWithItsCauseBesidesTheWarningOfTheLoss(CapturedOutput output) throws Exception {
        ScriptedBackend scripted = new ScriptedBackend();
        scripted.renewal.set(ScriptedBackend.Renewal.FAIL);
        ExecutorService pool = Executors.newSingleThreadExecutor();
        try (LeaseEngine engine = LeaseEngineTest.engineOver(scripted)) {
            BlockingWork work = new BlockingWork();
            Future<String> call = pool.submit(() -> engine.execute(LeaseSpec.of("ledger", LeaseKind.CORRECTNESS)
                    .withTtl(Duration.ofSeconds(30)).withRenewEvery(Duration.ofMillis(200)), work));
            assertThat(work.awaitStarted(seconds(10))).isTrue();
            assertThatThrownBy(() -> call.get(seconds(20).toMillis(), TimeUnit.MILLISECONDS))
                    .isInstanceOf(ExecutionException.class).cause().isInstanceOf(LeaseLostException.class);
        }
        finally {
            pool.shutdownNow();
        }
        await().atMost(seconds(10)).untilAsserted(() -> assertThat(output.getOut())
                .contains("Renewal of lease 'ledger' (token 1) on scripted failed")
                .contains("at dev.lease.core.ScriptedBackend.renew"));
        assertThat(line(output, "Renewal of lease 'ledger' (token 1) on scripted failed")).contains("DEBUG");
        assertThat(line(output, "Lease 'ledger' (token 1) on scripted lost (renewal-failed): renewal failed")).contains("WARN");
    }

    private static String line(CapturedOutput output, String text) {
        List<String> lines = output.getOut().lines().filter(l -> l.contains(text)).toList();
        assertThat(lines).as("log lines containing \"" + text + "\"").hasSize(1);
        return lines.get(0);
    }
}
