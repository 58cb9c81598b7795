package dev.lease.testing;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtensionContext;

/** The names of the shared servers' databases, and which test classes share one database; no server is started. */
class SharedDatabaseTest {

    @Test
    void aDatabaseIsNamedAfterItsClassAndUniqueInTheJvm() {
        String first = SharedServers.uniqueName("PostgresJdbcFenceTest");
        String second = SharedServers.uniqueName("PostgresJdbcFenceTest");
        assertThat(first).matches("postgresjdbcfencetest_[0-9]+");
        assertThat(second).matches("postgresjdbcfencetest_[0-9]+").isNotEqualTo(first);
    }

    @Test
    void anyHintMakesAValidName() {
        assertThat(SharedServers.uniqueName("POSTGRESQL_SHARED_TOKENS")).startsWith("postgresql_shared_tokens_");
        assertThat(SharedServers.uniqueName("1st test; DROP DATABASE x"))
                .matches("db_1st_test__drop_database_x_[0-9]+");
        assertThat(SharedServers.uniqueName("")).matches("db__[0-9]+");
        assertThat(SharedServers.uniqueName("A".repeat(200))).hasSizeLessThanOrEqualTo(63).matches("a+_[0-9]+");
    }

    @Test
    void aNameThatIsNoPlainIdentifierIsRefused() {
        for (String bad : List.of("x; DROP DATABASE postgres", "", "1abc", "Upper", "a".repeat(64), "a-b")) {
            assertThatThrownBy(() -> SharedServers.validated(bad)).isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'" + bad + "'").hasMessageContaining("[a-z][a-z0-9_]{0,62}");
        }
    }

    @Test
    void aClassAndItsNestedClassesShareOneDatabaseMadeBeforeTheirTests() {
        List<String> made = new ArrayList<>();
        SharedDatabase<String> extension = new SharedDatabase<>(hint -> {
            made.add(hint);
            return "db-of-" + hint;
        });
        assertThatThrownBy(extension::get).isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("@RegisterExtension");

        extension.beforeAll(contextOf(Outer.class));
        extension.beforeAll(contextOf(Outer.Inner.class));

        assertThat(made).containsExactly("Outer");
        assertThat(extension.get()).isEqualTo("db-of-Outer");
    }

    @Test
    void twoClassesOnOneExtensionAreRefused() {
        SharedDatabase<String> extension = new SharedDatabase<>(hint -> hint);
        extension.beforeAll(contextOf(Outer.class));
        assertThatThrownBy(() -> extension.beforeAll(contextOf(Other.class)))
                .isInstanceOf(IllegalStateException.class).hasMessageContaining(Other.class.getName())
                .hasMessageContaining(Outer.class.getName()).hasMessageContaining("each concrete test class");
    }

    private static ExtensionContext contextOf(Class<?> testClass) {
        return (ExtensionContext) Proxy.newProxyInstance(ExtensionContext.class.getClassLoader(),
                new Class<?>[] { ExtensionContext.class }, (proxy, method, args) -> switch (method.getName()) {
                    case "getRequiredTestClass" -> testClass;
                    case "getTestClass" -> java.util.Optional.of(testClass);
                    default -> throw new UnsupportedOperationException(method.getName());
                });
    }

    static class Outer {

        @Nested
        class Inner {
        }
    }

    static class Other {
    }
}
