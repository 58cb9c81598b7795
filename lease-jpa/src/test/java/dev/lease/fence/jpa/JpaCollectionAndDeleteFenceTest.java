package dev.lease.fence.jpa;

import static dev.lease.fence.jpa.JpaFenceTest.assertStale;
import static dev.lease.fence.jpa.JpaFenceTest.rootCause;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;
import java.util.function.Function;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import dev.lease.fence.StaleTokenException;
import dev.lease.fence.jpa.app.FencedApp;
import dev.lease.fence.jpa.app.Invoice;
import dev.lease.fence.jpa.app.Invoices;
import dev.lease.fence.jpa.app.Note;
import dev.lease.fence.jpa.app.Parcel;
import dev.lease.fence.jpa.app.Shipment;
import dev.lease.fence.jpa.app.Shipments;
import jakarta.persistence.EntityManager;

/**
 * The writes of a fenced entity that are no statement on its row (issue 42): changes of its collections, which
 * Hibernate writes through collection actions, and the insert or merge of an id whose row a newer token deleted.
 * Each stale write carries token 7 against a row (or a deleted row) at fence 8, on a real database each subclass
 * starts.
 */
abstract class JpaCollectionAndDeleteFenceTest {

    private static ConfigurableApplicationContext context;

    Shipments shipments;
    Invoices invoices;
    TransactionTemplate tx;
    JdbcTemplate jdbc;
    EntityManager entityManager;

    /** The JDBC URL of this class's database. */
    abstract String jdbcUrl();

    @BeforeEach
    void startApplication() {
        if (context == null) {
            context = FencedApp.start(jdbcUrl(), Map.of());
        }
        shipments = context.getBean(Shipments.class);
        invoices = context.getBean(Invoices.class);
        tx = new TransactionTemplate(context.getBean(PlatformTransactionManager.class));
        jdbc = context.getBean(JdbcTemplate.class);
        entityManager = context.getBean(EntityManager.class);
        for (String table : new String[] {"shipment_label", "shipment_note", "shipment_attachment", "parcel", "note",
                "shipment", "invoice", "lease_fence"}) {
            jdbc.update("DELETE FROM " + table);
        }
    }

    @AfterAll
    static void closeApplication() {
        if (context != null) {
            context.close();
            context = null;
        }
    }

    /** Shipment 1 as a holder with token 8 left it, written by SQL. */
    private void shipmentAtFence8() {
        jdbc.update("INSERT INTO shipment (id, state, fence) VALUES (1, 'B-WROTE', 8)");
    }

    private long shipmentFence() {
        return jdbc.queryForObject("SELECT fence FROM shipment WHERE id = 1", Long.class);
    }

    /** The rows of a table, or of a table and a condition ({@code "parcel WHERE shipment_id = 1"}). */
    private int rows(String table) {
        return jdbc.queryForObject("SELECT COUNT(*) FROM " + table, Integer.class);
    }

    private long noteBySql() {
        jdbc.update("INSERT INTO note (text) VALUES ('by sql')");
        return jdbc.queryForObject("SELECT MAX(id) FROM note", Long.class);
    }

    /** Token 7 changes a collection of shipment 1 (fence 8): refused, nothing written, the fence unchanged. */
    private void staleChangeIsRefused(Consumer<Shipment> change, String collectionTable) {
        try (FixedTokens stale = FixedTokens.of(7)) {
            assertThatThrownBy(() -> stale.run(() -> tx.executeWithoutResult(
                    status -> change.accept(shipments.findById(1L).orElseThrow()))))
                    .satisfies(refusal -> assertStale(refusal, "Shipment#1", 7, 8));
        }
        assertThat(rows(collectionTable)).as(collectionTable + " after the stale change").isZero();
        assertThat(shipmentFence()).isEqualTo(8);
    }

    /** A newer token's change of the same collection passes and moves the owner's fence, its row untouched else. */
    private void newerChangePassesAndMovesTheFence(Consumer<Shipment> change, String collectionTable) {
        try (FixedTokens newer = FixedTokens.of(9)) {
            newer.run(() -> tx.executeWithoutResult(status -> change.accept(shipments.findById(1L).orElseThrow())));
        }
        assertThat(rows(collectionTable)).isOne();
        assertThat(shipmentFence()).as("the owner's fence, moved by a collection change alone").isEqualTo(9);
    }

    @Test
    void elementCollectionChangeIsFencedLikeAnUpdateOfItsOwner() {
        shipmentAtFence8();
        staleChangeIsRefused(shipment -> shipment.getLabels().add("STALE"), "shipment_label");
        newerChangePassesAndMovesTheFence(shipment -> shipment.getLabels().add("NEWER"), "shipment_label");
        try (FixedTokens stale = FixedTokens.of(8)) {
            assertThatThrownBy(() -> stale.run(() -> tx.executeWithoutResult(
                    status -> shipments.findById(1L).orElseThrow().getLabels().clear())))
                    .as("removing the elements").satisfies(refusal -> assertStale(refusal, "Shipment#1", 8, 9));
            assertThatThrownBy(() -> stale.run(() -> tx.executeWithoutResult(
                    status -> shipments.findById(1L).orElseThrow().setLabels(Set.of("REPLACED")))))
                    .as("replacing the collection").satisfies(refusal -> assertStale(refusal, "Shipment#1", 8, 9));
        }
        assertThat(jdbc.queryForList("SELECT label FROM shipment_label", String.class)).containsExactly("NEWER");
    }

    @Test
    void manyToManyJoinTableChangeIsFenced() {
        notesAddedToAFencedShipment(Shipment::getNotes, "shipment_note");
    }

    @Test
    void unidirectionalOneToManyOverAJoinTableIsFenced() {
        notesAddedToAFencedShipment(Shipment::getAttachments, "shipment_attachment");
    }

    private void notesAddedToAFencedShipment(Function<Shipment, Set<Note>> collection, String joinTable) {
        shipmentAtFence8();
        long note = noteBySql();
        staleChangeIsRefused(shipment -> collection.apply(shipment).add(entityManager.find(Note.class, note)),
                joinTable);
        newerChangePassesAndMovesTheFence(shipment -> collection.apply(shipment).add(entityManager.find(Note.class,
                note)), joinTable);
    }

    @Test
    void unidirectionalOneToManyOverAJoinColumnIsFenced() {
        shipmentAtFence8();
        jdbc.update("INSERT INTO parcel (text) VALUES ('by sql')");
        long parcel = jdbc.queryForObject("SELECT MAX(id) FROM parcel", Long.class);
        String linked = "parcel WHERE shipment_id = 1";
        staleChangeIsRefused(shipment -> shipment.getParcels().add(entityManager.find(
                Parcel.class, parcel)), linked);
        newerChangePassesAndMovesTheFence(shipment -> shipment.getParcels().add(entityManager.find(
                Parcel.class, parcel)), linked);
    }

    @Test
    void collectionChangeWithoutATokenIsRefusedUnlessOptedOut() {
        shipmentAtFence8();
        assertThatThrownBy(() -> tx.executeWithoutResult(
                status -> shipments.findById(1L).orElseThrow().getLabels().add("NO-LEASE")))
                .satisfies(refusal -> assertThat(rootCause(refusal)).isInstanceOf(IllegalStateException.class)
                        .hasMessageContaining("collection").hasMessageContaining("Shipment#1")
                        .hasMessageContaining("UnfencedWrites.run"));
        assertThat(rows("shipment_label")).isZero();
        UnfencedWrites.run("admin fix in a test", () -> tx.executeWithoutResult(
                status -> shipments.findById(1L).orElseThrow().getLabels().add("FIXED")));
        assertThat(rows("shipment_label")).isOne();
        assertThat(shipmentFence()).as("an opted-out write leaves the fence as it is").isEqualTo(8);
    }

    @Test
    void equalTokenChangesACollectionAndANewOwnerWithItsCollectionsIsWritten() {
        shipmentAtFence8();
        try (FixedTokens same = FixedTokens.of(8)) {
            same.run(() -> tx.executeWithoutResult(status -> shipments.findById(1L).orElseThrow().getLabels()
                    .add("SAME")));
            same.run(() -> tx.executeWithoutResult(status -> {
                Shipment created = new Shipment(2, "NEW");
                created.getLabels().add("FIRST");
                shipments.save(created);
            }));
        }
        assertThat(rows("shipment_label")).isEqualTo(2);
        assertThat(jdbc.queryForObject("SELECT fence FROM shipment WHERE id = 2", Long.class)).isEqualTo(8);
    }

    /** Token 8 deletes invoice 42; token 7 then persists a new invoice 42: refused, the row stays gone. */
    @Test
    void persistAfterANewerDeleteIsRefused() {
        invoiceDeletedByToken8();
        try (FixedTokens stale = FixedTokens.of(7)) {
            assertThatThrownBy(() -> stale.run(() -> tx.executeWithoutResult(
                    status -> entityManager.persist(new Invoice(42, "STALE", 1)))))
                    .satisfies(refusal -> assertStale(refusal, "Invoice#42", 7, 8));
        }
        assertThat(rows("invoice")).isZero();
        try (FixedTokens same = FixedTokens.of(8)) {
            same.run(() -> tx.executeWithoutResult(status -> entityManager.persist(new Invoice(42, "AGAIN", 1))));
        }
        assertThat(jdbc.queryForObject("SELECT fence FROM invoice WHERE id = 42", Long.class)).isEqualTo(8);
    }

    /** A detached copy read before token 8 deleted invoice 42, merged by token 7 (Spring Data's save): refused. */
    @Test
    void mergeOfADetachedCopyAfterANewerDeleteIsRefused() {
        jdbc.update("INSERT INTO invoice (id, state, amount, fence) VALUES (42, 'NEW', 0, 6)");
        Invoice detached = invoices.findById(42L).orElseThrow();
        detached.setState("STALE");
        try (FixedTokens newer = FixedTokens.of(8)) {
            newer.run(() -> tx.executeWithoutResult(status -> invoices.deleteById(42L)));
        }
        try (FixedTokens stale = FixedTokens.of(7)) {
            assertThatThrownBy(() -> stale.run(() -> tx.executeWithoutResult(status -> invoices.save(detached))))
                    .satisfies(refusal -> assertStale(refusal, "Invoice#42", 7, 8));
            assertThatThrownBy(() -> stale.run(() -> tx.executeWithoutResult(
                    status -> entityManager.merge(detached)))).isInstanceOf(StaleTokenException.class);
        }
        assertThat(rows("invoice")).isZero();
    }

    /** The delete's transaction keeps the fence: rolled back with it, and kept by an opted-out delete too. */
    @Test
    void theTombstoneIsWrittenInTheDeletesTransaction() {
        jdbc.update("INSERT INTO invoice (id, state, amount, fence) VALUES (42, 'NEW', 0, 6)");
        jdbc.update("INSERT INTO invoice (id, state, amount, fence) VALUES (43, 'NEW', 0, 6)");
        try (FixedTokens newer = FixedTokens.of(8)) {
            newer.run(() -> tx.executeWithoutResult(status -> {
                invoices.deleteById(42L);
                invoices.flush();
                status.setRollbackOnly();
            }));
        }
        assertThat(rows("lease_fence")).as("no tombstone of a delete that rolled back").isZero();
        try (FixedTokens newer = FixedTokens.of(8)) {
            newer.run(() -> tx.executeWithoutResult(status -> invoices.deleteById(42L)));
        }
        assertThat(jdbc.queryForObject("SELECT fence FROM lease_fence WHERE resource = 'Invoice#42'", Long.class))
                .as("the tombstone of Invoice#42, keyed like the refusals' resource").isEqualTo(8);
        UnfencedWrites.run("admin delete in a test", () -> tx.executeWithoutResult(status -> invoices.deleteById(43L)));
        assertThat(jdbc.queryForObject("SELECT fence FROM lease_fence WHERE resource = 'Invoice#43'", Long.class))
                .as("an opted-out delete keeps the row's fence").isEqualTo(6);
    }

    private void invoiceDeletedByToken8() {
        jdbc.update("INSERT INTO invoice (id, state, amount, fence) VALUES (42, 'NEW', 0, 6)");
        try (FixedTokens newer = FixedTokens.of(8)) {
            newer.run(() -> tx.executeWithoutResult(status -> invoices.deleteById(42L)));
        }
        assertThat(rows("invoice")).isZero();
    }
}
