package dev.lease.fence.jpa;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import dev.lease.LeaseContext;
import dev.lease.fence.FencedTable;
import dev.lease.fence.JdbcFence;
import dev.lease.fence.StaleTokenException;
import dev.lease.fence.jpa.app.Billing;
import dev.lease.fence.jpa.app.FencedApp;
import dev.lease.fence.jpa.app.Invoice;
import dev.lease.fence.jpa.app.Invoices;
import dev.lease.fence.jpa.app.Note;
import dev.lease.fence.jpa.app.Refusals;
import dev.lease.fence.jpa.app.Notes;
import dev.lease.fence.jpa.app.VersionedInvoice;
import dev.lease.fence.jpa.app.VersionedInvoices;
import jakarta.persistence.EntityManager;

/**
 * {@link FenceColumn} through Hibernate as Spring Boot configures it ({@code JpaTransactionManager}, Spring Data
 * repositories), on a real database each subclass starts. Tokens come from {@link FixedTokens} where a test needs
 * given values, and from the in-memory backend through {@code @Leased} for the application's own methods.
 */
abstract class JpaFenceTest {

    private static ConfigurableApplicationContext context;
    private static String contextUrl;

    Invoices invoices;
    VersionedInvoices versioned;
    Notes notes;
    Billing billing;
    Refusals refusals;
    TransactionTemplate tx;
    JdbcTemplate jdbc;
    EntityManager entityManager;

    /** The JDBC URL of this class's database. */
    abstract String jdbcUrl();

    @BeforeEach
    void startApplication() {
        String url = jdbcUrl();
        if (context == null || !url.equals(contextUrl)) {
            closeApplication();
            context = FencedApp.start(url, Map.of());
            contextUrl = url;
        }
        invoices = context.getBean(Invoices.class);
        versioned = context.getBean(VersionedInvoices.class);
        notes = context.getBean(Notes.class);
        billing = context.getBean(Billing.class);
        refusals = context.getBean(Refusals.class);
        refusals.heard.clear();
        tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
        jdbc = context.getBean(JdbcTemplate.class);
        entityManager = context.getBean(EntityManager.class);
        jdbc.update("DELETE FROM invoice");
        jdbc.update("DELETE FROM versioned_invoice");
    }

    @AfterAll
    static void closeApplication() {
        if (context != null) {
            context.close();
            context = null;
        }
    }

    /** A row as another holder left it, written without the fence by SQL. */
    void row(long id, String state, long fence) {
        jdbc.update("INSERT INTO invoice (id, state, amount, fence) VALUES (?, ?, 0, ?)", id, state, fence);
    }

    String state(long id) {
        return jdbc.queryForObject("SELECT state FROM invoice WHERE id = ?", String.class, id);
    }

    long fence(long id) {
        return jdbc.queryForObject("SELECT fence FROM invoice WHERE id = ?", Long.class, id);
    }

    @Test
    void dirtyCheckingWritesTheTokenIntoTheColumn() {
        row(1, "NEW", 3);
        try (FixedTokens leases = FixedTokens.of(7)) {
            leases.run(() -> tx.executeWithoutResult(status -> invoices.findById(1L).orElseThrow().setState("BILLED")));
        }
        assertThat(state(1)).isEqualTo("BILLED");
        assertThat(fence(1)).isEqualTo(7);
    }

    @Test
    void dirtyCheckingWithAHigherFenceIsRefusedAndRolledBack() {
        row(1, "B-WROTE", 8);
        try (FixedTokens leases = FixedTokens.of(7)) {
            assertThatThrownBy(() -> leases.run(() -> tx.executeWithoutResult(status -> {
                Invoice invoice = invoices.findById(1L).orElseThrow();
                invoice.setState("A-WROTE");
                notes.save(new Note("same transaction"));
            }))).satisfies(refusal -> assertStale(refusal, "Invoice#1", 7, 8));
        }
        assertThat(state(1)).isEqualTo("B-WROTE");
        assertThat(fence(1)).isEqualTo(8);
        assertThat(refusals.heard).as("the application's FenceListener beans hear of it").hasSize(1)
                .allSatisfy(heard -> assertThat(heard).endsWithIgnoringCase("invoice:Invoice#1"));
        assertThat(jdbc.queryForObject("SELECT COUNT(*) FROM note WHERE text = 'same transaction'", Integer.class))
                .as("the transaction's other writes roll back too").isZero();
    }

    @Test
    void equalTokenPasses() {
        row(1, "NEW", 7);
        try (FixedTokens leases = FixedTokens.of(7)) {
            leases.run(() -> tx.executeWithoutResult(status -> invoices.findById(1L).orElseThrow().setState("AGAIN")));
        }
        assertThat(state(1)).isEqualTo("AGAIN");
        assertThat(fence(1)).isEqualTo(7);
    }

    @Test
    void saveOfADetachedEntityIsFenced() {
        row(1, "NEW", 8);
        Invoice detached = invoices.findById(1L).orElseThrow();
        detached.setState("STALE");
        try (FixedTokens stale = FixedTokens.of(7); FixedTokens fresh = FixedTokens.of(9)) {
            assertThatThrownBy(() -> stale.run(() -> tx.executeWithoutResult(status -> invoices.save(detached))))
                    .satisfies(refusal -> assertStale(refusal, "Invoice#1", 7, 8));
            assertThat(state(1)).isEqualTo("NEW");
            fresh.run(() -> tx.executeWithoutResult(status -> invoices.save(detached)));
        }
        assertThat(state(1)).isEqualTo("STALE");
        assertThat(fence(1)).isEqualTo(9);
    }

    @Test
    void saveAndFlushIsFencedAtTheFlush() {
        row(1, "NEW", 8);
        try (FixedTokens stale = FixedTokens.of(7)) {
            assertThatThrownBy(() -> stale.run(() -> tx.executeWithoutResult(status -> {
                Invoice invoice = invoices.findById(1L).orElseThrow();
                invoice.setState("STALE");
                try {
                    invoices.saveAndFlush(invoice);
                }
                catch (StaleTokenException refused) {
                    status.setRollbackOnly();
                    throw refused;
                }
            }))).isInstanceOf(StaleTokenException.class);
        }
        assertThat(state(1)).isEqualTo("NEW");
    }

    @Test
    void insertIsFencedAndCarriesTheToken() {
        try (FixedTokens leases = FixedTokens.of(4)) {
            leases.run(() -> tx.executeWithoutResult(status -> invoices.save(new Invoice(2, "NEW", 10))));
        }
        assertThat(fence(2)).isEqualTo(4);
    }

    @Test
    void insertOfAnIdANewerTokenAlreadyWroteIsRefused() {
        row(3, "B-WROTE", 6);
        try (FixedTokens stale = FixedTokens.of(5)) {
            assertThatThrownBy(() -> stale.run(() -> tx.executeWithoutResult(
                    status -> entityManager.persist(new Invoice(3, "A-WROTE", 1)))))
                    .satisfies(refusal -> assertStale(refusal, "Invoice#3", 5, 6));
        }
        assertThat(state(3)).isEqualTo("B-WROTE");
    }

    @Test
    void deleteIsFenced() {
        row(4, "B-WROTE", 6);
        try (FixedTokens stale = FixedTokens.of(5)) {
            assertThatThrownBy(() -> stale.run(() -> tx.executeWithoutResult(status -> invoices.deleteById(4L))))
                    .satisfies(refusal -> assertStale(refusal, "Invoice#4", 5, 6));
        }
        assertThat(state(4)).isEqualTo("B-WROTE");
    }

    /** 5 commits, then 6: both accepted. 6 commits, then 5: 5 refused. The test that fails without the comparison. */
    @Test
    void tokensFiveAndSixInBothCommitOrders() {
        row(1, "NEW", 0);
        row(2, "NEW", 0);
        try (FixedTokens five = FixedTokens.of(5); FixedTokens six = FixedTokens.of(6)) {
            five.run(() -> tx.executeWithoutResult(status -> invoices.findById(1L).orElseThrow().setState("FIVE")));
            six.run(() -> tx.executeWithoutResult(status -> invoices.findById(1L).orElseThrow().setState("SIX")));
            assertThat(state(1)).isEqualTo("SIX");
            assertThat(fence(1)).isEqualTo(6);

            six.run(() -> tx.executeWithoutResult(status -> invoices.findById(2L).orElseThrow().setState("SIX")));
            assertThatThrownBy(() -> five.run(() -> tx.executeWithoutResult(
                    status -> invoices.findById(2L).orElseThrow().setState("FIVE"))))
                    .satisfies(refusal -> assertStale(refusal, "Invoice#2", 5, 6));
            assertThat(state(2)).isEqualTo("SIX");
            assertThat(fence(2)).isEqualTo(6);
        }
    }

    @Test
    void versionedEntityKeepsBothChecks() {
        try (FixedTokens five = FixedTokens.of(5); FixedTokens six = FixedTokens.of(6)) {
            six.run(() -> tx.executeWithoutResult(status -> versioned.save(new VersionedInvoice(1, "NEW"))));
            six.run(() -> tx.executeWithoutResult(status -> versioned.findById(1L).orElseThrow().setState("SIX")));
            VersionedInvoice row = versioned.findById(1L).orElseThrow();
            assertThat(row.getFence()).isEqualTo(6);
            assertThat(row.getVersion()).isEqualTo(1);
            assertThatThrownBy(() -> five.run(() -> tx.executeWithoutResult(
                    status -> versioned.findById(1L).orElseThrow().setState("FIVE"))))
                    .satisfies(refusal -> assertStale(refusal, "VersionedInvoice#1", 5, 6));
            assertThat(versioned.findById(1L).orElseThrow().getState()).isEqualTo("SIX");
        }
    }

    @Test
    void noTokenIsRefusedNamingTheEntityAndBothWaysOut() {
        row(1, "NEW", 3);
        assertThatThrownBy(() -> tx.executeWithoutResult(
                status -> invoices.findById(1L).orElseThrow().setState("NO-LEASE"))).satisfies(refusal -> {
                    Throwable cause = rootCause(refusal);
                    assertThat(cause).isInstanceOf(IllegalStateException.class);
                    assertThat(cause.getMessage()).contains("Invoice#1", "@FenceColumn", "leased section",
                            "UnfencedWrites.run");
                });
        assertThat(state(1)).isEqualTo("NEW");
        assertThat(notesSaved()).as("unfenced entities need no token").isEqualTo(notesSaved());
    }

    @Test
    void namedOptOutWritesWithoutTouchingTheFence() {
        row(1, "NEW", 3);
        UnfencedWrites.run("admin fix in a test", () -> tx.executeWithoutResult(
                status -> invoices.findById(1L).orElseThrow().setState("FIXED")));
        assertThat(state(1)).isEqualTo("FIXED");
        assertThat(fence(1)).isEqualTo(3);
        assertThatThrownBy(() -> UnfencedWrites.run(" ", () -> { })).isInstanceOf(IllegalArgumentException.class);
    }

    @Test
    void leasedMethodWithItsOwnTransactionIsFenced() {
        row(1, "NEW", 0);
        billing.bill(1);
        assertThat(state(1)).isEqualTo("BILLED");
        long token = fence(1);
        assertThat(token).isPositive();
        jdbc.update("UPDATE invoice SET state = 'NEWER', fence = ? WHERE id = 1", Long.MAX_VALUE);
        assertThatThrownBy(() -> billing.bill(1)).satisfies(refusal -> assertThat(rootCause(refusal))
                .isInstanceOf(StaleTokenException.class));
        assertThat(state(1)).isEqualTo("NEWER");
    }

    @Test
    void leasedMethodCallingATransactionalBeanIsFenced() {
        row(1, "NEW", 0);
        billing.cancel(1);
        assertThat(state(1)).isEqualTo("CANCELLED");
        assertThat(fence(1)).isPositive();
        jdbc.update("UPDATE invoice SET state = 'NEWER', fence = ? WHERE id = 1", Long.MAX_VALUE);
        assertThatThrownBy(() -> billing.cancel(1)).satisfies(refusal -> assertThat(rootCause(refusal))
                .isInstanceOf(StaleTokenException.class));
        assertThat(state(1)).isEqualTo("NEWER");
    }

    /**
     * Fence at grant for an entity: the entity's own table and fence column as a {@code FencedTable}, advanced first
     * in the section, in a transaction of its own. From then on an older token's write of the entity is refused,
     * although the new holder has not written it yet.
     */
    @Test
    void fenceAtGrantOfAnEntityRowRefusesOlderTokensBeforeTheFirstWrite() {
        row(1, "NEW", 0);
        FencedTable invoiceRows = context.getBean(JdbcFence.class).table("invoice", "id", "fence");
        try (FixedTokens older = FixedTokens.of(5); FixedTokens newer = FixedTokens.of(6)) {
            newer.run(() -> invoiceRows.advanceAtGrant(1L, LeaseContext.token()));
            assertThat(fence(1)).isEqualTo(6);
            assertThatThrownBy(() -> older.run(() -> tx.executeWithoutResult(
                    status -> invoices.findById(1L).orElseThrow().setState("OLDER"))))
                    .satisfies(refusal -> assertStale(refusal, "Invoice#1", 5, 6));
        }
        assertThat(state(1)).isEqualTo("NEW");
    }

    private int notesSaved() {
        notes.save(new Note("unfenced"));
        return 1;
    }

    static void assertStale(Throwable refusal, String resource, long presented, long current) {
        assertThat(refusal).isInstanceOf(StaleTokenException.class);
        StaleTokenException stale = (StaleTokenException) refusal;
        assertThat(stale.resource()).isEqualTo(resource);
        assertThat(stale.presented().value()).isEqualTo(presented);
        assertThat(stale.current()).isEqualTo(current);
    }

    static Throwable rootCause(Throwable failure) {
        Throwable cause = failure;
        while (cause.getCause() != null && cause.getCause() != cause) {
            cause = cause.getCause();
        }
        return cause;
    }
}
