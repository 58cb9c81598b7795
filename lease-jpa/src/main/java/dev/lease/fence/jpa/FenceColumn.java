package dev.lease.fence.jpa;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks the {@code long}/{@code Long} field of an entity that holds the highest fencing token that wrote the row,
 * which makes every insert, update and delete of the entity fenced.
 *
 * <p>Inside a leased section whose lease has a token ({@link dev.lease.LeaseContext#token()}), each write of the
 * entity that Hibernate flushes first reads the row's fence with a row lock ({@code SELECT ... FOR UPDATE}, in the
 * same transaction), refuses the write with {@link dev.lease.fence.StaleTokenException} when the row already carries
 * a higher token, and otherwise writes the token into this column along with the entity's other columns. The lock
 * holds until the transaction ends, so writers with different tokens are ordered; the exception rolls the
 * transaction back and nothing of it is written. Equal tokens pass. That covers dirty checking (no save call),
 * {@code persist}, {@code merge}, Spring Data's {@code save} and {@code saveAndFlush}, {@code @Version} entities,
 * and a new entity whose id a newer token already wrote.
 *
 * <p>A change of the entity's collections that Hibernate writes without its row (an {@code @ElementCollection}, the
 * join table of a {@code @ManyToMany}, a unidirectional {@code @OneToMany}) is fenced as a write of the entity: its row
 * is locked and checked the same way, and its fence moved to the token. A delete keeps the deleted row's fence as a
 * tombstone in the {@code lease_fence} table (resource {@code Entity#id}, written in the delete's transaction), and an
 * insert of an id whose row is gone is refused below that mark, so an older holder cannot persist or merge the id
 * back; fenced entities therefore need that table (lease-jdbc's {@code dev/lease/fence/schema-<platform>.sql}).
 *
 * <p>Outside a leased section a write of such an entity is refused with {@link IllegalStateException}, unless it
 * runs inside {@link UnfencedWrites#run(String, Runnable)}, the explicit opt-out for one admin fix or migration.
 *
 * <p>What this cannot fence: bulk JPQL/Criteria {@code update}/{@code delete} statements and native queries, which
 * bypass the entity lifecycle (a bulk delete leaves no tombstone), an inverse ({@code mappedBy}) collection, which the
 * entity on its other side writes, and any other writer of the table (another application, SQL by hand). Write those
 * through {@code JdbcFence.table(...)} ({@code FencedTable}) with the same column. The application is checked at
 * startup: a {@code @FenceColumn} that is not a {@code long}/{@code Long}, two on one entity, one on an entity with
 * {@code @DynamicUpdate} or a composite id fail the startup naming the entity and the field.
 *
 * <pre>{@code
 * @Entity
 * class Invoice {
 *     @Id Long id;
 *     String state;
 *     @FenceColumn long fence;   // column "fence", BIGINT NOT NULL DEFAULT 0
 * }
 * }</pre>
 */
@Target(ElementType.FIELD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface FenceColumn {
}
