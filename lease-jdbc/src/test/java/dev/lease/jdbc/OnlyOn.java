package dev.lease.jdbc;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.util.Arrays;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.params.ParameterInfo;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * Runs a test, or a nested class of tests, of a {@link JdbcLeaseBackendContract} only on the given variants: for what
 * only one database can get wrong, tested on the server its variant already started.
 */
@Retention(RetentionPolicy.RUNTIME)
@Target({ElementType.TYPE, ElementType.METHOD})
@ExtendWith(OnlyOn.Condition.class)
@interface OnlyOn {

    /** The variants the test runs on. */
    JdbcVariant[] value();

    /** Reads the variant of the running invocation of the parameterized contract class. */
    final class Condition implements ExecutionCondition {

        @Override
        public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
            JdbcVariant[] only = context.getElement()
                    .flatMap(element -> AnnotationSupport.findAnnotation(element, OnlyOn.class))
                    .map(OnlyOn::value).orElse(null);
            ParameterInfo parameters = ParameterInfo.get(context);
            if (only == null || parameters == null) {
                return ConditionEvaluationResult.enabled("not limited to some variants");
            }
            JdbcVariant variant = parameters.getArguments().get(0, JdbcVariant.class);
            return Arrays.asList(only).contains(variant)
                    ? ConditionEvaluationResult.enabled("runs on " + variant)
                    : ConditionEvaluationResult.disabled("only on " + Arrays.toString(only) + ", not on " + variant);
        }
    }
}
