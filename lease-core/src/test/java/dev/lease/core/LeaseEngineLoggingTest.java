package dev.lease.core;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.IThrowableProxy;
import ch.qos.logback.classic.spi.StackTraceElementProxy;
import ch.qos.logback.core.read.ListAppender;
import dev.lease.Lease;
import dev.lease.LeaseKind;
import dev.lease.LeaseLostException;
import dev.lease.LeaseSpec;
import dev.lease.memory.InMemoryLeaseBackend;
import dev.lease.testing.BlockingWork;

/**
 * With {@code dev.lease} at DEBUG, the log answers "why didn't it run?"; nothing is logged at INFO per call. The
 * engine logs through Commons Logging, which hands its records to SLF4J, and here to Logback, when they are present.
 */
class LeaseEngineLoggingTest {

    private final Logger logger = (Logger) LoggerFactory.getLogger("dev.lease");
    private final ListAppender<ILoggingEvent> output = new ListAppender<>();
    private Level level;

    @BeforeEach
    void debug() {
        level = logger.getLevel();
        logger.setLevel(Level.DEBUG);
        output.start();
        logger.addAppender(output);
    }

    @AfterEach
    void restore() {
        logger.detachAppender(output);
        logger.setLevel(level);
    }

    @Test
    void acquireSkipAndReleaseAreLoggedAtDebug() throws Throwable {
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
        assertThat(line("Lease 'nightly-report' (token " + token + ") acquired on in-memory after waiting ").getLevel())
                .isEqualTo(Level.DEBUG);
        assertThat(line("Lease 'nightly-report' is held by someone else on in-memory (waited 200ms): "
                + "skipped (whenBusy = SKIP)").getLevel()).isEqualTo(Level.DEBUG);
        assertThat(line("Lease 'nightly-report' (token " + token + ") released on in-memory").getLevel())
                .isEqualTo(Level.DEBUG);
        assertThat(events().filter(e -> e.getLevel().isGreaterOrEqual(Level.INFO)
                && e.getLoggerName().startsWith("dev.lease.core")).map(ILoggingEvent::getFormattedMessage))
                .as("INFO lines per call").isEmpty();
    }

    @Test
    void aFailedRenewalIsLoggedAtDebugWithItsCauseBesidesTheWarningOfTheLoss() throws Exception {
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
        await().atMost(seconds(10)).untilAsserted(() -> assertThat(events().map(ILoggingEvent::getFormattedMessage))
                .anyMatch(m -> m.contains("Renewal of lease 'ledger' (token 1) on scripted failed")));
        ILoggingEvent failed = line("Renewal of lease 'ledger' (token 1) on scripted failed");
        assertThat(failed.getLevel()).isEqualTo(Level.DEBUG);
        assertThat(stackTrace(failed.getThrowableProxy())).as("the cause's stack trace")
                .anyMatch(frame -> frame.contains("at dev.lease.core.ScriptedBackend.renew"));
        assertThat(line("Lease 'ledger' (token 1) on scripted lost (renewal-failed): renewal failed").getLevel())
                .isEqualTo(Level.WARN);
    }

    private Stream<ILoggingEvent> events() {
        synchronized (output) {
            return List.copyOf(output.list).stream();
        }
    }

    private ILoggingEvent line(String text) {
        List<ILoggingEvent> lines = events().filter(e -> e.getFormattedMessage().contains(text)).toList();
        assertThat(lines).as("log lines containing \"" + text + "\"").hasSize(1);
        return lines.get(0);
    }

    /** The frames of a logged exception and of its causes, as a log line prints them. */
    private static List<String> stackTrace(IThrowableProxy thrown) {
        List<String> frames = new ArrayList<>();
        for (IThrowableProxy t = thrown; t != null; t = t.getCause()) {
            for (StackTraceElementProxy frame : t.getStackTraceElementProxyArray()) {
                frames.add(frame.getSTEAsString());
            }
        }
        return frames;
    }
}
