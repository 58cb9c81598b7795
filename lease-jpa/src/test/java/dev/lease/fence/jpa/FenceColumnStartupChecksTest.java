package dev.lease.fence.jpa;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.hibernate.SessionFactory;
import org.hibernate.annotations.DynamicUpdate;
import org.hibernate.cfg.Configuration;
import org.junit.jupiter.api.Test;

import dev.lease.LeaseConfigurationException;
import jakarta.persistence.Entity;
import jakarta.persistence.Id;
import jakarta.persistence.Transient;

/** A mapping the fence cannot serve fails when the session factory is built, naming the entity and the field. */
class FenceColumnStartupChecksTest {

    @Entity(name = "TextFence")
    static class TextFence {
        @Id
        Long id;
        @FenceColumn
        String fence;
    }

    @Entity(name = "TwoFences")
    static class TwoFences {
        @Id
        Long id;
        @FenceColumn
        long fence;
        @FenceColumn
        long other;
    }

    @Entity(name = "TransientFence")
    static class TransientFence {
        @Id
        Long id;
        @FenceColumn
        @Transient
        long fence;
    }

    @Entity(name = "DynamicFence")
    @DynamicUpdate
    static class DynamicFence {
        @Id
        Long id;
        @FenceColumn
        long fence;
    }

    @Entity(name = "GoodFence")
    static class GoodFence {
        @Id
        Long id;
        @FenceColumn
        Long fence;
    }

    @Test
    void aFenceColumnThatIsNotALongFailsNamingEntityAndField() {
        assertThatThrownBy(() -> build(TextFence.class)).satisfies(failure -> assertThat(cause(failure).getMessage())
                .contains("TextFence.fence", "entity TextFence", "java.lang.String", "long"));
    }

    @Test
    void twoFenceColumnsOnOneEntityFailNamingBoth() {
        assertThatThrownBy(() -> build(TwoFences.class)).satisfies(failure -> assertThat(cause(failure).getMessage())
                .contains("entity TwoFences", "TwoFences.fence", "TwoFences.other"));
    }

    @Test
    void aTransientFenceColumnFails() {
        assertThatThrownBy(() -> build(TransientFence.class)).satisfies(failure -> assertThat(cause(failure)
                .getMessage()).contains("TransientFence.fence", "not a persistent attribute"));
    }

    @Test
    void dynamicUpdateFails() {
        assertThatThrownBy(() -> build(DynamicFence.class)).satisfies(failure -> assertThat(cause(failure)
                .getMessage()).contains("DynamicFence", "@DynamicUpdate"));
    }

    @Test
    void aLongFenceColumnStarts() {
        try (SessionFactory factory = build(GoodFence.class)) {
            assertThat(factory.isOpen()).isTrue();
        }
    }

    /** A database whose lease_fence lease-jdbc cannot write: a fenced delete could not keep the row's fence. */
    @Test
    void aDatabaseWithoutTombstonesFailsNamingTheEntities() {
        assertThatThrownBy(() -> build(GoodFence.class, "org.hibernate.dialect.HSQLDialect"))
                .satisfies(failure -> assertThat(cause(failure).getMessage())
                        .contains("GoodFence", "HSQLDialect", "lease_fence"));
    }

    private static SessionFactory build(Class<?> entity) {
        return build(entity, null);
    }

    private static SessionFactory build(Class<?> entity, String dialect) {
        Configuration configuration = new Configuration().addAnnotatedClass(entity)
                .setProperty("hibernate.connection.url", "jdbc:h2:mem:startup-checks")
                .setProperty("hibernate.hbm2ddl.auto", "create-drop");
        if (dialect != null) {
            configuration.setProperty("hibernate.dialect", dialect);
        }
        return configuration.buildSessionFactory();
    }

    private static LeaseConfigurationException cause(Throwable failure) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof LeaseConfigurationException configuration) {
                return configuration;
            }
        }
        throw new AssertionError("no LeaseConfigurationException in " + failure, failure);
    }
}
