package dev.lease.fence.jpa;

import static dev.lease.testing.TestTiming.seconds;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import dev.lease.LeaseContext;
import dev.lease.fence.JdbcFence;
import dev.lease.fence.jpa.app.FencedApp;
import dev.lease.fence.jpa.app.Invoices;
import jakarta.persistence.EntityManager;

/**
 * The fenced transactions' idle bound ({@link FenceColumnIntegrator#IDLE_TIMEOUT_PROPERTY}, set by the starter from
 * {@code lease.fence.idle-timeout}) under Spring's {@code JpaTransactionManager}, on a real database each subclass
 * starts: the JPA side of {@code JdbcFenceTest}'s tests of the same names.
 */
abstract class IdleBoundJpaTest {

    private static final ExecutorService pool = Executors.newCachedThreadPool();
    private static ConfigurableApplicationContext context;

    Invoices invoices;
    TransactionTemplate tx;
    JdbcTemplate jdbc;
    EntityManager entityManager;

    /** The JDBC URL of this class's database. */
    abstract String jdbcUrl();

    /** Reads the connection's idle bound. */
    abstract String idleTimeoutSetting();

    /** How {@link #idleTimeoutSetting()} shows a bound of one second. */
    abstract String oneSecond();

    /** Reads the id of the connection's session on the server. */
    abstract String sessionId();

    @BeforeAll
    static void noApplicationYet() {
        closeApplication();
    }

    @BeforeEach
    void startApplication() {
        if (context == null) {
            context = FencedApp.start(jdbcUrl(), Map.of("lease.fence.idle-timeout", "1s"));
        }
        invoices = context.getBean(Invoices.class);
        tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
        jdbc = context.getBean(JdbcTemplate.class);
        entityManager = context.getBean(EntityManager.class);
        jdbc.update("DELETE FROM invoice");
        jdbc.update("INSERT INTO invoice (id, state, amount, fence) VALUES (1, 'NEW', 0, 0)");
    }

    @AfterAll
    static void closeApplication() {
        if (context != null) {
            context.close();
            context = null;
        }
    }

    /**
     * The soak's liveness hole, for entities: a holder stopped inside its fenced transaction (a thread that sends
     * nothing more, as a process under SIGSTOP) kept the entity's row locked for as long as it stayed stopped, so the
     * successor's fence at grant and fenced write of that entity waited for it. Bounded, the database ends the stopped
     * holder's session, the successor goes through, and the holder's commit fails.
     */
    @ParameterizedTest
    @ValueSource(strings = {"fence at grant", "fenced write"})
    void aHolderStoppedInsideItsFencedTransactionNoLongerBlocksTheSuccessor(String successor) throws Exception {
        CountDownLatch locked = new CountDownLatch(1);
        CountDownLatch wake = new CountDownLatch(1);
        try (FixedTokens one = FixedTokens.of(1); FixedTokens two = FixedTokens.of(2)) {
            Future<?> holder = pool.submit(() -> one.run(() -> tx.executeWithoutResult(status -> {
                invoices.findById(1L).orElseThrow().setState("HOLDER");
                entityManager.flush();
                locked.countDown();
                // Stopped for longer than the successor waits for it: only the bound can let the successor in.
                await(wake, seconds(120).toMillis());
            })));
            assertThat(locked.await(seconds(30).toMillis(), TimeUnit.MILLISECONDS)).as("the holder locked").isTrue();
            Future<?> next = pool.submit(() -> two.run(() -> {
                if (successor.equals("fence at grant")) {
                    context.getBean(JdbcFence.class).table("invoice", "id", "fence")
                            .advanceAtGrant(1L, LeaseContext.token());
                }
                else {
                    tx.executeWithoutResult(status -> invoices.findById(1L).orElseThrow().setState("SUCCESSOR"));
                }
            }));
            try {
                next.get(seconds(20).toMillis(), TimeUnit.MILLISECONDS);
            }
            finally {
                wake.countDown();
            }
            assertThatThrownBy(() -> holder.get(seconds(60).toMillis(), TimeUnit.MILLISECONDS))
                    .as("the stopped holder's commit").isInstanceOf(ExecutionException.class);
        }
        assertThat(jdbc.queryForObject("SELECT fence FROM invoice WHERE id = 1", Long.class)).isEqualTo(2L);
        assertThat(jdbc.queryForObject("SELECT state FROM invoice WHERE id = 1", String.class))
                .isEqualTo(successor.equals("fenced write") ? "SUCCESSOR" : "NEW");
    }

    /**
     * The bound is the fenced transaction's alone: set by the entity's fenced update or delete, before its locking
     * read, and gone once the transaction ends, from the very session the pool hands out next.
     */
    @ParameterizedTest
    @ValueSource(strings = {"update", "delete"})
    void theIdleBoundIsSetForTheFencedTransactionAndGoneAfterIt(String write) {
        Object session = jdbc.queryForObject(sessionId(), Object.class);
        String before = jdbc.queryForObject(idleTimeoutSetting(), String.class);
        List<Object> during = new ArrayList<>();
        try (FixedTokens one = FixedTokens.of(1)) {
            one.run(() -> tx.executeWithoutResult(status -> {
                during.add(jdbc.queryForObject(sessionId(), Object.class));
                during.add(jdbc.queryForObject(idleTimeoutSetting(), String.class));
                if (write.equals("update")) {
                    invoices.findById(1L).orElseThrow().setState("BOUNDED");
                }
                else {
                    invoices.deleteById(1L);
                }
                entityManager.flush();
                during.add(jdbc.queryForObject(idleTimeoutSetting(), String.class));
            }));
        }
        assertThat(during).as("the transaction's session, its bound before and after the fenced write")
                .containsExactly(session, before, oneSecond());
        assertThat(jdbc.queryForObject(sessionId(), Object.class)).as("the same session after").isEqualTo(session);
        assertThat(jdbc.queryForObject(idleTimeoutSetting(), String.class)).isEqualTo(before);
    }

    @Test
    void unfencedWritesAreNotBounded() {
        String before = jdbc.queryForObject(idleTimeoutSetting(), String.class);
        List<String> during = new ArrayList<>();
        UnfencedWrites.run("idle bound test", () -> tx.executeWithoutResult(status -> {
            invoices.findById(1L).orElseThrow().setState("UNFENCED");
            entityManager.flush();
            during.add(jdbc.queryForObject(idleTimeoutSetting(), String.class));
        }));
        assertThat(during).containsExactly(before);
    }

    private static void await(CountDownLatch latch, long millis) {
        try {
            latch.await(millis, TimeUnit.MILLISECONDS);
        }
        catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
        }
    }
}
