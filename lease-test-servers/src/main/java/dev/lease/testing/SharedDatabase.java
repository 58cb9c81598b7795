package dev.lease.testing;

import java.lang.reflect.Modifier;
import java.util.function.Function;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Hands a test class a fresh database of its own on a PostgreSQL or MariaDB server that its test JVM starts once, on
 * first use, and stops when it exits:
 *
 * <pre>{@code
 * @RegisterExtension
 * static final SharedDatabase<PostgresDatabase> POSTGRES = SharedDatabase.postgres();
 * }</pre>
 *
 * The database exists before the class's own {@code @BeforeAll} methods run, named after the class. Declare the field
 * in each concrete class (not in an abstract base, whose subclasses would share it); {@code @Nested} classes share
 * their enclosing class's database. A test that stops, pauses or restarts its server, or changes what the whole server
 * has (users, roles, global settings), takes a server of its own ({@link PostgresServer#start()},
 * {@link MariaDbServer#start(String)}).
 *
 * @param <D> the database type
 */
public final class SharedDatabase<D> implements BeforeAllCallback {

    private final Function<String, D> create;
    private volatile Class<?> owner;
    private volatile D database;

    SharedDatabase(Function<String, D> create) {
        this.create = create;
    }

    /**
     * A database on the shared PostgreSQL server.
     *
     * @return the extension, for a static {@code @RegisterExtension} field
     */
    public static SharedDatabase<PostgresDatabase> postgres() {
        return new SharedDatabase<>(PostgresDatabase::create);
    }

    /**
     * A database on the shared MariaDB server; the tests are skipped when MariaDB is not installed.
     *
     * @return the extension, for a static {@code @RegisterExtension} field
     */
    public static SharedDatabase<MariaDbDatabase> mariadb() {
        return new SharedDatabase<>(MariaDbDatabase::create);
    }

    @Override
    public synchronized void beforeAll(ExtensionContext context) {
        Class<?> outermost = outermost(context.getRequiredTestClass());
        if (database == null) {
            database = create.apply(outermost.getSimpleName());
            owner = outermost;
        }
        else if (owner != outermost) {
            throw new IllegalStateException(outermost.getName() + " would share the database of " + owner.getName()
                    + ": declare the static @RegisterExtension SharedDatabase field in each concrete test class");
        }
    }

    /**
     * The class's database.
     *
     * @return the database, created before the class's {@code @BeforeAll} methods
     * @throws IllegalStateException when no class has run with this extension yet
     */
    public D get() {
        D created = database;
        if (created == null) {
            throw new IllegalStateException("No database yet: register this SharedDatabase on a static field with "
                    + "@RegisterExtension (JUnit creates the database before the class's @BeforeAll methods)");
        }
        return created;
    }

    /** The top-level class of a {@code @Nested} class, which shares its database. */
    private static Class<?> outermost(Class<?> testClass) {
        Class<?> c = testClass;
        while (c.getEnclosingClass() != null && !Modifier.isStatic(c.getModifiers())) {
            c = c.getEnclosingClass();
        }
        return c;
    }
}
