package dev.lease.testing;

import java.io.IOException;
import java.io.InputStream;
import java.util.LinkedHashSet;
import java.util.Set;

import org.springframework.asm.AnnotationVisitor;
import org.springframework.asm.ClassReader;
import org.springframework.asm.ClassVisitor;
import org.springframework.asm.Handle;
import org.springframework.asm.MethodVisitor;
import org.springframework.asm.Opcodes;
import org.springframework.asm.Type;

/**
 * What one class file makes the JVM (or Spring's reflection over the class) load: its super types, the types in its
 * field and method descriptors (lambda methods included, which {@code getDeclaredMethods} resolves), and the types its
 * code names; apart from them, the classes its {@code @ConditionalOnClass} names (read by Spring without loading) and
 * the classes other annotations name (an {@code @Import} loads them).
 *
 * @param name the class, binary name ({@code a.b.C$D})
 * @param loads the classes loading or introspecting it may load
 * @param conditionalOnClass the classes its {@code @ConditionalOnClass} requires
 * @param annotated classes named in its other annotations and its member classes: Spring may load them next
 */
record ClassReferences(String name, Set<String> loads, Set<String> conditionalOnClass, Set<String> annotated) {

    private static final String CONDITIONAL_ON_CLASS =
            "Lorg/springframework/boot/autoconfigure/condition/ConditionalOnClass;";

    private static final String CONDITIONAL_ON_WEB_APPLICATION =
            "Lorg/springframework/boot/autoconfigure/condition/ConditionalOnWebApplication;";

    static ClassReferences read(InputStream classFile) throws IOException {
        ClassReader reader = new ClassReader(classFile);
        Collector collector = new Collector();
        reader.accept(collector, ClassReader.SKIP_DEBUG | ClassReader.SKIP_FRAMES);
        collector.loads.remove(collector.name);
        return new ClassReferences(collector.name, collector.loads, collector.conditional, collector.annotated);
    }

    private static String binary(String internalName) {
        return internalName.replace('/', '.');
    }

    private static final class Collector extends ClassVisitor {

        final Set<String> loads = new LinkedHashSet<>();
        final Set<String> conditional = new LinkedHashSet<>();
        final Set<String> annotated = new LinkedHashSet<>();
        String name;

        Collector() {
            super(Opcodes.ASM9);
        }

        void type(Type type) {
            switch (type.getSort()) {
                case Type.ARRAY -> type(type.getElementType());
                case Type.OBJECT -> loads.add(binary(type.getInternalName()));
                case Type.METHOD -> {
                    type(type.getReturnType());
                    for (Type argument : type.getArgumentTypes()) {
                        type(argument);
                    }
                }
                default -> { }
            }
        }

        void internal(String internalName) {
            if (internalName != null) {
                type(internalName.startsWith("[") ? Type.getType(internalName) : Type.getObjectType(internalName));
            }
        }

        void constant(Object value) {
            if (value instanceof Type t) {
                type(t);
            }
            else if (value instanceof Handle h) {
                internal(h.getOwner());
                type(Type.getType(h.getDesc()));
            }
        }

        @Override
        public void visit(int version, int access, String name, String signature, String superName,
                String[] interfaces) {
            this.name = binary(name);
            internal(superName);
            for (String i : interfaces) {
                internal(i);
            }
        }

        @Override
        public void visitInnerClass(String inner, String outer, String innerName, int access) {
            if (outer != null && binary(outer).equals(name)) {
                annotated.add(binary(inner));
            }
        }

        @Override
        public AnnotationVisitor visitAnnotation(String descriptor, boolean visible) {
            if (descriptor.equals(CONDITIONAL_ON_WEB_APPLICATION)) {
                return new WebApplication(conditional);
            }
            return new Values(descriptor.equals(CONDITIONAL_ON_CLASS) ? conditional : annotated,
                    descriptor.equals(CONDITIONAL_ON_CLASS));
        }

        @Override
        public org.springframework.asm.FieldVisitor visitField(int access, String name, String descriptor,
                String signature, Object value) {
            type(Type.getType(descriptor));
            return null;
        }

        @Override
        public MethodVisitor visitMethod(int access, String name, String descriptor, String signature,
                String[] exceptions) {
            type(Type.getType(descriptor));
            if (exceptions != null) {
                for (String e : exceptions) {
                    internal(e);
                }
            }
            return new Code();
        }

        /** Class values of an annotation; for {@code @ConditionalOnClass} its {@code name} strings as well. */
        private final class Values extends AnnotationVisitor {

            private final Set<String> into;
            private final boolean names;

            Values(Set<String> into, boolean names) {
                super(Opcodes.ASM9);
                this.into = into;
                this.names = names;
            }

            @Override
            public void visit(String attribute, Object value) {
                if (value instanceof Type t && t.getSort() == Type.OBJECT) {
                    into.add(t.getClassName());
                }
                else if (names && value instanceof String s) {
                    into.add(s);
                }
            }

            @Override
            public AnnotationVisitor visitArray(String attribute) {
                return this;
            }

            @Override
            public AnnotationVisitor visitAnnotation(String attribute, String descriptor) {
                return this;
            }
        }

        /**
         * A servlet web application has the servlet API, a reactive one Spring WebFlux: Boot deduces the type from
         * those classes, and a context of that type cannot start without them.
         */
        private static final class WebApplication extends AnnotationVisitor {

            private final Set<String> into;

            WebApplication(Set<String> into) {
                super(Opcodes.ASM9);
                this.into = into;
            }

            @Override
            public void visitEnum(String attribute, String descriptor, String value) {
                if (value.equals("SERVLET")) {
                    into.add("jakarta.servlet.Servlet");
                }
                else if (value.equals("REACTIVE")) {
                    into.add("org.springframework.web.reactive.DispatcherHandler");
                }
            }
        }

        private final class Code extends MethodVisitor {

            Code() {
                super(Opcodes.ASM9);
            }

            @Override
            public void visitTypeInsn(int opcode, String type) {
                internal(type);
            }

            @Override
            public void visitFieldInsn(int opcode, String owner, String name, String descriptor) {
                internal(owner);
                type(Type.getType(descriptor));
            }

            @Override
            public void visitMethodInsn(int opcode, String owner, String name, String descriptor,
                    boolean isInterface) {
                internal(owner);
                type(Type.getType(descriptor));
            }

            @Override
            public void visitInvokeDynamicInsn(String name, String descriptor, Handle bootstrap, Object... arguments) {
                type(Type.getType(descriptor));
                constant(bootstrap);
                for (Object argument : arguments) {
                    constant(argument);
                }
            }

            @Override
            public void visitLdcInsn(Object value) {
                constant(value);
            }

            @Override
            public void visitMultiANewArrayInsn(String descriptor, int dimensions) {
                type(Type.getType(descriptor));
            }

            @Override
            public void visitTryCatchBlock(org.springframework.asm.Label start, org.springframework.asm.Label end,
                    org.springframework.asm.Label handler, String type) {
                internal(type);
            }
        }
    }
}
