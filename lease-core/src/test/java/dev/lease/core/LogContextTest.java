package dev.lease.core;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assumptions.assumeThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import dev.lease.LeaseKind;
import dev.lease.LeaseSpec;
import dev.lease.memory.InMemoryLeaseBackend;

/**
 * Inside a leased section the MDC carries {@code lease.name} and {@code lease.token} of the innermost lease, so a log
 * line can be traced to the grant it was written under; outside, neither is there. Read through Logback, as an
 * application's appender would.
 */
class LogContextTest {

    private final Logger logger = (Logger) LoggerFactory.getLogger("application");
    private final ListAppender<ILoggingEvent> output = new ListAppender<>();
    private final InMemoryLeaseBackend memory = new InMemoryLeaseBackend();
    private LeaseEngine engine;

    @BeforeEach
    void start() {
        output.start();
        logger.addAppender(output);
        engine = LeaseEngineTest.engineOver(memory);
    }

    @AfterEach
    void stop() {
        logger.detachAppender(output);
        engine.close();
    }

    @Test
    void aLineWrittenInASectionCarriesItsLeaseAndToken() throws Throwable {
        long[] tokens = new long[2];
        engine.run(LeaseSpec.of("report", LeaseKind.CORRECTNESS), outer -> {
            tokens[0] = outer.token().value();
            logger.info("outer");
            engine.run(LeaseSpec.of("invoice-42", LeaseKind.CORRECTNESS), inner -> {
                tokens[1] = inner.token().value();
                logger.info("inner");
                return null;
            }, () -> null);
            logger.info("outer again");
            return null;
        }, () -> null);
        logger.info("after");

        assertThat(context("outer")).containsExactlyInAnyOrderEntriesOf(
                Map.of("lease.name", "report", "lease.token", Long.toString(tokens[0])));
        assertThat(context("inner")).containsExactlyInAnyOrderEntriesOf(
                Map.of("lease.name", "invoice-42", "lease.token", Long.toString(tokens[1])));
        assertThat(context("outer again")).containsExactlyInAnyOrderEntriesOf(
                Map.of("lease.name", "report", "lease.token", Long.toString(tokens[0])));
        assertThat(context("after")).doesNotContainKeys("lease.name", "lease.token");
        assertThat(MDC.get("lease.name")).isNull();
    }

    @Test
    void aSectionOnAVirtualThreadCarriesItToo() throws Exception {
        assumeThat(Runtime.version().feature()).as("virtual threads need Java 21").isGreaterThanOrEqualTo(21);
        ExecutorService virtual = (ExecutorService) Executors.class.getMethod("newVirtualThreadPerTaskExecutor")
                .invoke(null);
        try {
            List<CompletableFuture<Long>> tokens = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                String name = "job-" + i;
                tokens.add(CompletableFuture.supplyAsync(() -> {
                    try {
                        return engine.run(LeaseSpec.of(name, LeaseKind.CORRECTNESS), lease -> {
                            Thread.sleep(5);
                            logger.info(name);
                            return lease.token().value();
                        }, () -> -1L);
                    }
                    catch (Throwable ex) {
                        throw new IllegalStateException(ex);
                    }
                }, virtual));
            }
            for (int i = 0; i < 20; i++) {
                long token = tokens.get(i).get(30, TimeUnit.SECONDS);
                assertThat(context("job-" + i)).containsExactlyInAnyOrderEntriesOf(
                        Map.of("lease.name", "job-" + i, "lease.token", Long.toString(token)));
            }
        }
        finally {
            virtual.shutdownNow();
        }
    }

    private Map<String, String> context(String message) {
        return output.list.stream().filter(e -> e.getFormattedMessage().equals(message)).findFirst()
                .orElseThrow(() -> new AssertionError("no line '" + message + "'")).getMDCPropertyMap();
    }
}
