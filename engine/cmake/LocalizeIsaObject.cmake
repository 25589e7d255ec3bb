# cmake -P LocalizeIsaObject.cmake: the last step of a per-ISA kernel object (engine/CMakeLists.txt).
# Variables: NM, OBJCOPY, IN (the `ld -r --force-group-allocation` output), OUT, ENTRY (the one
# symbol kept global), SUFFIX. Every defined symbol but ENTRY becomes local; objcopy cannot make
# GNU_UNIQUE symbols (function-local statics of inline functions: Eigen's cache sizes, the standard
# library's digit tables) local, and out of their COMDAT groups they would clash with the other
# objects' copies, so those are renamed NAME.SUFFIX: the object keeps its own instance.
execute_process(COMMAND ${NM} --defined-only ${IN} OUTPUT_VARIABLE symbols RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "nm failed on ${IN}")
endif()
string(REPLACE "\n" ";" lines "${symbols}")
set(renames "")
foreach(line IN LISTS lines)
  if(line MATCHES "^[0-9a-fA-F]+ u (.+)$")
    list(APPEND renames "--redefine-sym=${CMAKE_MATCH_1}=${CMAKE_MATCH_1}.${SUFFIX}")
  endif()
endforeach()
execute_process(COMMAND ${OBJCOPY} --keep-global-symbol=${ENTRY} ${renames} ${IN} ${OUT}
                RESULT_VARIABLE status)
if(NOT status EQUAL 0)
  message(FATAL_ERROR "objcopy failed on ${IN}")
endif()
