package dev.lease.autoconfigure;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.springframework.context.annotation.Conditional;

/**
 * Matches when the {@code lease.*backend} properties leave room for a backend: none is set, or one names it. A backend
 * that must be named ({@link BackendType#onlyWhenNamed}) matches only in the second case. So an application routed
 * to ZooKeeper gets no lease table in its database, and the in-memory backend is never picked silently.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Conditional(OnLeaseBackendCondition.class)
@interface ConditionalOnLeaseBackend {

    /** The backend the annotated configuration creates. */
    BackendType value();
}
