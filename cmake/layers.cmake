# The modules of twin and what each may include, lowest first (ARCHITECTURE.md explains the
# order). Used twice: CMakeLists.txt links each module's library only to these, and the
# check below (run at every build) fails when a source file includes a module not listed here,
# so a wrong include is a build error naming the file and the include, not a review comment.
set(TWIN_MODULES core options proc topology plan graph state runtime wiring drivers traffic validate validators
    engine verdict changeset causes gate drill report training serve cli)
set(TWIN_DEPS_core "")
set(TWIN_DEPS_options core)
set(TWIN_DEPS_proc core)
set(TWIN_DEPS_topology core)
set(TWIN_DEPS_plan core topology)
set(TWIN_DEPS_graph core topology plan)
set(TWIN_DEPS_state core topology plan)
set(TWIN_DEPS_runtime core proc topology plan)
set(TWIN_DEPS_wiring core proc plan runtime)
set(TWIN_DEPS_drivers core proc topology plan state runtime wiring)
# Traffic patterns through iperf3 and what the fabric made of them (twin traffic, the traffic
# family): drivers say where a node's packets start.
set(TWIN_DEPS_traffic core proc topology plan state runtime wiring drivers)
set(TWIN_DEPS_validate core proc topology plan state runtime drivers traffic)
set(TWIN_DEPS_validators core topology plan runtime traffic validate)
set(TWIN_DEPS_engine core proc topology plan graph state runtime wiring drivers validate)
# The rollout gate's rooms (ARCHITECTURE.md §2): what it sees and its seams (verdict), change
# sets and their step handlers (changeset), the likely-cause rules (causes), the gate's run
# (gate), the failure drill (drill). One namespace, twin::replay; each room a library.
set(TWIN_DEPS_verdict core proc topology plan state runtime drivers validate engine)
set(TWIN_DEPS_changeset core proc topology plan state runtime drivers validate engine verdict)
set(TWIN_DEPS_causes core proc topology plan state runtime drivers validate engine verdict)
set(TWIN_DEPS_gate core proc topology plan state runtime drivers validate engine verdict changeset
    causes)
set(TWIN_DEPS_drill core proc topology plan state runtime drivers validate engine verdict changeset
    causes gate)
set(TWIN_DEPS_report core topology plan state runtime validate verdict changeset gate drill)
set(TWIN_DEPS_training core proc topology plan state runtime drivers validate engine verdict
    changeset causes gate)
set(TWIN_DEPS_serve core options proc topology plan graph state runtime drivers validate engine report)
set(TWIN_DEPS_cli core options proc topology plan graph state runtime wiring drivers traffic validate validators
    engine verdict changeset causes gate drill report training serve)

# The folder that holds a module's sources, relative to the repository root.
function(twin_module_dir module out)
  if(module STREQUAL "validators")
    set(${out} "validators" PARENT_SCOPE)
  else()
    set(${out} "twin/${module}" PARENT_SCOPE)
  endif()
endfunction()

# Script mode: cmake -DROOT=<repo> -DSTAMP=<file> -P cmake/layers.cmake
if(CMAKE_SCRIPT_MODE_FILE AND ROOT)
  cmake_policy(SET CMP0057 NEW)  # if(IN_LIST)
  set(problems "")
  foreach(module IN LISTS TWIN_MODULES)
    twin_module_dir(${module} dir)
    set(allowed ${module} ${TWIN_DEPS_${module}})
    file(GLOB_RECURSE files "${ROOT}/${dir}/*.cpp" "${ROOT}/${dir}/*.hpp")
    foreach(f IN LISTS files)
      file(STRINGS "${f}" lines REGEX "^#include \"(twin/[a-z_]+|validators)/")
      foreach(line IN LISTS lines)
        string(REGEX MATCH "\"(twin/([a-z_]+)|validators)/" _ "${line}")
        if(CMAKE_MATCH_2)
          set(target "${CMAKE_MATCH_2}")
        else()
          set(target "validators")
        endif()
        if(NOT target IN_LIST allowed)
          file(RELATIVE_PATH rel "${ROOT}" "${f}")
          string(REPLACE ";" ", " allowed_text "${TWIN_DEPS_${module}}")
          list(APPEND problems "${rel}: ${line}: module '${module}' may include only itself and: ${allowed_text} (cmake/layers.cmake)")
        endif()
      endforeach()
    endforeach()
  endforeach()
  # The node-driver seam (twin/drivers/driver.hpp): outside the drivers, the profile that names
  # a backend and the image choice that sets one (plan/images.cpp), no code asks which backend
  # a node has; it asks the driver what it can do.
  file(GLOB_RECURSE seam_files "${ROOT}/twin/*.cpp" "${ROOT}/twin/*.hpp" "${ROOT}/validators/*.cpp"
       "${ROOT}/validators/*.hpp")
  foreach(f IN LISTS seam_files)
    file(RELATIVE_PATH rel "${ROOT}" "${f}")
    if(rel MATCHES "^twin/drivers/" OR rel STREQUAL "twin/topology/model.hpp" OR
       rel STREQUAL "twin/topology/image_profile.cpp" OR rel STREQUAL "twin/plan/images.cpp")
      continue()
    endif()
    file(STRINGS "${f}" lines REGEX "Backend::k[A-Z]|backend [!=]= \"")
    foreach(line IN LISTS lines)
      string(STRIP "${line}" line)
      list(APPEND problems "${rel}: ${line}: code above the node drivers asks a node's backend: ask its driver (twin/drivers/driver.hpp) or the image profile's data instead")
    endforeach()
  endforeach()
  if(problems)
    list(JOIN problems "\n" text)
    message(FATAL_ERROR "layering violation(s):\n${text}")
  endif()
  file(WRITE "${STAMP}" "ok\n")
endif()
