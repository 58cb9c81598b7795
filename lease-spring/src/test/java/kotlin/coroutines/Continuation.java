package kotlin.coroutines;

/**
 * Stands in for Kotlin's own interface (Kotlin is not on this module's test classpath): a Kotlin {@code suspend fun}
 * compiles to a JVM method whose last parameter is a {@code kotlin.coroutines.Continuation}, which is all the
 * startup check looks at.
 *
 * @param <T> the coroutine's result type
 */
public interface Continuation<T> {
}
